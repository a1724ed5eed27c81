"""The toolkit's development half: schema synthesis (what Chromium derives from a form),
the template linter and the `flask webmcp` commands. Needs BeautifulSoup; the running site
never imports it."""
