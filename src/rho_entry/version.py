"""rho-agent's version, in a leaf module: the CLI, the exports, the OpenAPI document and the
OpenTelemetry tracer read it without importing each other. Keep it equal to pyproject's."""

VERSION = "0.2.0"
