"""API tokens in the admin: the secret is shown once, when a token is created; revoke is an action."""
from django.contrib import admin, messages
from django.utils.html import format_html

from dashboard.api.models import ApiToken
from dashboard.api.services import api_token_create, api_token_revoke


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "can_write", "created_at", "last_used_at", "revoked_at", "created_by"]
    list_filter = ["can_write", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix", "note"]
    readonly_fields = ["prefix", "created_by", "created_at", "last_used_at", "revoked_at"]
    fields = ["name", "can_write", "note", *readonly_fields]
    actions = ["revoke"]

    def save_model(self, request, obj, form, change):
        if change:  # name, note and can_write can be edited; the secret never changes
            super().save_model(request, obj, form, change)
            return
        token, secret = api_token_create(name=obj.name, can_write=obj.can_write, note=obj.note,
                                         created_by=request.user.get_username())
        obj.pk, obj.prefix, obj.key_hash, obj.created_at, obj.created_by = token.pk, token.prefix, token.key_hash, token.created_at, token.created_by
        obj._state.adding, obj._state.db = False, token._state.db
        self.message_user(request, format_html(
            "The secret of token “{}” is <code id=\"api-token-secret\">{}</code>. Copy it now: only its hash is stored, "
            "so it cannot be shown again. Use it as <code>Authorization: Token &lt;secret&gt;</code>.", token.name, secret),
            messages.WARNING)

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        count = api_token_revoke(token_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"{count} token(s) revoked.", messages.SUCCESS)
