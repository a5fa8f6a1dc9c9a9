from noul_lsp.text.terms import identifier_terms, query_terms, terms


def test_snake_and_camel_case_are_split_and_kept_whole():
    assert identifier_terms("max_retry_count") == ["max_retry_count", "max", "retry", "count"]
    assert identifier_terms("getHTTPResponse2") == ["gethttpresponse2", "get", "http", "response", "2"]
    assert identifier_terms("Session") == ["session"]


def test_stop_words_and_single_letters_dropped():
    assert terms("where do we retry a failed upload x") == ["retry", "failed", "upload"]


def test_query_terms_are_unique_in_first_seen_order():
    assert query_terms("cookie jar cookieJar cookie") == ["cookie", "jar", "cookiejar"]
