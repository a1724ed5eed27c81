"""The toolkit's development half: schema synthesis (what Chromium derives from a form),
the template linter, the `flask webmcp` commands and the pattern check (V8 in Chromium, through
Playwright when it is installed). Needs BeautifulSoup; the running site never imports it."""
