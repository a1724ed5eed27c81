"""The HTTP layer: one blueprint per area, and what every request passes through (tool
calls, error answers, visitor sessions, rate limits, body limits, headers, compression,
static files)."""
