"""The one build step pyproject.toml cannot say: compile the message catalogs into the package.

The .po files under src/flask_webmcp/translations are the source and the compiled .mo files
are not committed, so building a wheel compiles them first; package-data then packs them.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCatalogs(build_py):
    """build_py that compiles every catalog before the package data is gathered."""

    def run(self) -> None:
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        for po in Path(__file__).parent.glob("src/flask_webmcp/translations/*/LC_MESSAGES/*.po"):
            with po.open("rb") as source:
                catalog = read_po(source)
            with po.with_suffix(".mo").open("wb") as target:
                write_mo(target, catalog)
        super().run()


setup(cmdclass={"build_py": BuildWithCatalogs})
