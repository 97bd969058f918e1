"""drf-spectacular extensions: how our token authentication appears in the schema."""
from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "dashboard.api.auth.ApiTokenAuthentication"
    name = "token"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token created in the admin: `Authorization: Bearer <secret>` "
            "(or `Authorization: Token <secret>`). Reads need none unless the server sets API_READS_REQUIRE_TOKEN.",
        }
