"""``{% docs_footer %}``: the footer of every page, linking to the docs served at /docs/ (docs/index.md)."""
from django import template
from django.utils.html import format_html, format_html_join

from dashboard.web.docs_pages import footer_links

register = template.Library()


@register.simple_tag
def docs_footer():
    links = format_html_join(" · ", '<a href="{}">{}</a>', footer_links())
    return format_html('<footer class="docs" id="docs-footer">Documentation: {}</footer>', links)
