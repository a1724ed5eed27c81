"""Real-browser tests: Debian's Chromium with WebMCP uses the site as an agent and as a person."""
