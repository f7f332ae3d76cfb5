"""The one page shell: self-contained, nothing fetched, model text escaped."""

from __future__ import annotations

from debategraph.views.shell import CONTENT_SECURITY_POLICY, data_uri, document, esc


def test_model_text_is_escaped_tags_and_quotes() -> None:
    assert esc('<script>alert("x")</script>') == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
    assert esc("<img src=x onerror='y'>") == "&lt;img src=x onerror=&#x27;y&#x27;&gt;"
    assert esc(None) == ""


def test_document_forbids_scripts_and_requests_and_escapes_its_title() -> None:
    page = document("<b>t</b>", "<p>body</p>")
    assert page.startswith("<!DOCTYPE html>")
    assert f'content="{CONTENT_SECURITY_POLICY}"' in page
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src" not in CONTENT_SECURITY_POLICY  # default-src 'none' covers scripts
    assert "<title>&lt;b&gt;t&lt;/b&gt;</title>" in page
    assert 'http-equiv="refresh"' not in page
    assert '<meta http-equiv="refresh" content="5">' in document("t", "", refresh_s=5)


def test_data_uri_is_base64() -> None:
    assert data_uri(b"\x89PNG", "image/png") == "data:image/png;base64,iVBORw=="
