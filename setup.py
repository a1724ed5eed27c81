"""The one build step setup.cfg cannot say: compile the message catalogs into the package.

The .po files under webapp/translations are the source and the compiled .mo files are not
committed, so building a wheel (`pip install .`) compiles them into the build directory,
never into the checkout: a build must not rewrite the files a running site (or another
test worker) is reading. (`make install` compiles them for the checkout itself.)
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE = Path(__file__).parent


class BuildWithCatalogs(build_py):
    """build_py that also writes every catalog, compiled, beside the package it builds."""

    def run(self) -> None:
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        super().run()
        for po in SOURCE.glob("webapp/translations/*/LC_MESSAGES/*.po"):
            with po.open("rb") as source:
                catalog = read_po(source)
            target = Path(self.build_lib) / po.relative_to(SOURCE).with_suffix(".mo")
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as compiled:
                write_mo(compiled, catalog)


setup(cmdclass={"build_py": BuildWithCatalogs})
