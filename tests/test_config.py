from noul_lsp.config import IndexSettings, SearchSettings, Settings, parse_settings, with_overrides


def test_defaults_when_nothing_given():
    settings, problems = parse_settings(None)
    assert settings == Settings()
    assert problems == []


def test_camel_and_snake_case_keys_both_accepted():
    settings, problems = parse_settings({"index": {"maxFileBytes": 10, "token_budget": 128},
                                         "search": {"rrfK": 30, "mode": "chunks"}})
    assert problems == []
    assert settings.index.max_file_bytes == 10
    assert settings.index.token_budget == 128
    assert settings.search.rrf_k == 30
    assert settings.search.mode == "chunks"


def test_bad_values_fall_back_to_defaults_with_a_message():
    settings, problems = parse_settings({"index": {"maxFileBytes": "big", "exclude": "*.txt"},
                                         "search": {"mode": "everything", "limit": -3}, "colour": "blue",
                                         "models": 7})
    assert settings.index.max_file_bytes == IndexSettings().max_file_bytes
    assert settings.index.exclude == ()
    assert settings.search == SearchSettings()
    assert any("index.maxFileBytes must be an integer" in p for p in problems)
    assert any("index.exclude must be a list" in p for p in problems)
    assert any("search.mode must be one of files, chunks" in p for p in problems)
    assert any("search.limit must not be negative" in p for p in problems)
    assert any("unknown setting 'colour'" in p for p in problems)
    assert any("models must be an object" in p for p in problems)


def test_lists_become_tuples_and_overrides_replace_fields():
    settings, _ = parse_settings({"index": {"exclude": ["vendor/", "*.gen.go"]}})
    assert settings.index.exclude == ("vendor/", "*.gen.go")
    changed = with_overrides(settings, search={"limit": 3})
    assert changed.search.limit == 3
    assert changed.index.exclude == ("vendor/", "*.gen.go")


def test_values_that_would_index_or_find_nothing_keep_the_default():
    settings, problems = parse_settings({"index": {"tokenBudget": 0, "maxFileBytes": 0}, "search": {"limit": 0}})
    assert settings.index.token_budget == IndexSettings().token_budget
    assert settings.index.max_file_bytes == IndexSettings().max_file_bytes and settings.search.limit == 10
    assert len(problems) == 3 and all("must be at least" in p for p in problems)
