from crawler.lib.outline import outline_markdown


def test_outline_sections_code_and_links():
    doc = outline_markdown(
        "# Guide\n\nIntro text.\n\n## Install\n\n```bash\npip install x\n\n# a comment\n```\n\n"
        "See [API](https://a.com/api) and [API](https://a.com/api).\n\n### Notes\n\n- one\n- two"
    )
    assert doc["title"] == "Guide"
    assert [(h["level"], h["title"]) for h in doc["outline"]] == [(1, "Guide"), (2, "Install"), (3, "Notes")]
    # a "# comment" inside a code block is not a heading
    assert doc["code_blocks"] == [{"language": "bash", "code": "pip install x\n\n# a comment", "section": "Install"}]
    assert doc["links"] == [{"text": "API", "url": "https://a.com/api"}]
    assert doc["sections"][2] == {"heading": "Notes", "level": 3, "text": "- one\n- two"}


def test_empty_and_headingless_documents():
    assert outline_markdown("")["title"] == ""
    doc = outline_markdown("Just a paragraph.")
    assert doc["sections"] == [{"heading": "", "level": 0, "text": "Just a paragraph."}]
    assert outline_markdown("## Only h2")["title"] == "Only h2"


def test_unterminated_fence_keeps_code():
    assert outline_markdown("```\ncode")["code_blocks"][0]["code"] == "code"


def test_headings_are_read_as_the_chunker_reads_them():
    from crawler.lib.blocks import split_blocks

    markdown = "## Using C#\n\n# Title ##\n\n### F# and C# #\n\ntext\n\n~~~\ncode\n~~~"
    doc = outline_markdown(markdown)
    headings = [b.text for b in split_blocks(markdown) if b.kind == "heading"]
    assert [h["title"] for h in doc["outline"]] == headings == ["Using C#", "Title", "F# and C#"]
    assert doc["code_blocks"] == [{"language": "", "code": "code", "section": "F# and C#"}]
