import os
import subprocess
from pathlib import Path

import pytest

from noul_lsp.config import IndexSettings
from noul_lsp.workspace.discovery import SkippedFile, discover, excluded_by_default, read_text_file

EXPECTED = {
    "src/net/retry.py", "src/store/cookies.py", "web/src/rateLimiter.ts", "web/src/SearchBox.tsx",
    "web/src/debounce.js", "services/export/csv.go", "crates/auth/src/token.rs",
    "java/com/example/imaging/Thumbnailer.java", "native/config.c", "native/lru.cpp", "scripts/markdown.rb",
    "docs/deploy.md", "notebooks/sales.ipynb", "src/legacy.py", "assets/logo.py", "huge.txt",
}


@pytest.mark.parametrize("layout", ["polyglot", "polyglot_git"])
def test_listing_honours_ignores_and_never_leaves_the_root(layout, request):
    root: Path = request.getfixturevalue(layout)
    found = {f.path for f in discover(root, IndexSettings())}
    assert EXPECTED <= found
    # .gitignore'd folder and pattern, .noulignore'd file
    assert not any(p.startswith("generated/") for p in found)
    assert "run.log" not in found
    assert "docs/private.md" not in found
    # symlink loop, link to a file outside the root, broken link
    assert not any(p.startswith("loop/") for p in found)
    assert "outside_link.py" not in found
    assert "broken_link.py" not in found


def test_configured_excludes_apply(polyglot):
    found = {f.path for f in discover(polyglot, IndexSettings(exclude=("native/", "*.rb")))}
    assert "native/config.c" not in found and "scripts/markdown.rb" not in found
    assert "src/net/retry.py" in found


def test_the_files_only_the_default_excludes_leave_out_are_listed(tmp_path):
    """`status` lists them: a project's own `bootstrap-colors.css` matched the vendored library's pattern and
    was left out without a word. A `!path` in .noulignore keeps one; the user's own excludes are not listed."""
    (tmp_path / "static").mkdir()
    for name in ("bootstrap-colors.css", "app.min.js", "app.js", "notes.tmp"):
        (tmp_path / "static" / name).write_text("x\n")
    settings = IndexSettings(exclude=("*.tmp",))
    assert excluded_by_default(tmp_path, settings) == {
        "*.min.js": {"files": 1, "paths": ["static/app.min.js"]},
        "bootstrap*.css": {"files": 1, "paths": ["static/bootstrap-colors.css"]}}
    assert excluded_by_default(tmp_path, IndexSettings(use_default_excludes=False)) == {}
    (tmp_path / ".noulignore").write_text("!static/bootstrap-colors.css\n")
    assert excluded_by_default(tmp_path, settings) == {"*.min.js": {"files": 1, "paths": ["static/app.min.js"]}}
    # a folder pattern gives its folders, not the thousands of files under them
    for folder in ("node_modules/left-pad", "web/node_modules/react"):
        (tmp_path / folder).mkdir(parents=True)
        for n in range(3):
            (tmp_path / folder / f"f{n}.js").write_text("x\n")
    assert excluded_by_default(tmp_path, settings)["node_modules/"] == {
        "files": 6, "paths": ["node_modules/", "web/node_modules/"]}
    assert "static/bootstrap-colors.css" in {f.path for f in discover(tmp_path, settings)}
    # Terraform's provider lock, its downloaded providers and its state (which holds secrets) are no one's code
    (tmp_path / "infra" / ".terraform" / "providers").mkdir(parents=True)
    for name in ("main.tf", ".terraform.lock.hcl", "terraform.tfstate", "terraform.tfstate.backup",
                 ".terraform/providers/x.tf"):
        (tmp_path / "infra" / name).write_text("x\n")
    assert {f.path for f in discover(tmp_path, settings) if f.path.startswith("infra/")} == {"infra/main.tf"}
    # what a game engine writes beside its assets, 3D models as text and IDE project files: a game's scripts,
    # scenes and shaders stay
    (tmp_path / "game" / ".godot" / "imported").mkdir(parents=True)
    for name in ("player.gd", "main.tscn", "dissolve.gdshader", "icon.svg.import", "player.gd.uid", "robot.obj",
                 "robot.mtl", "level.gltf", "gun.dae", ".godot/imported/x.ctex.md5", "Game.vcxproj", "Game.sln"):
        (tmp_path / "game" / name).write_text("x\n")
    assert {f.path for f in discover(tmp_path, settings) if f.path.startswith("game/")} == {
        "game/player.gd", "game/main.tscn", "game/dissolve.gdshader"}


def test_binary_and_oversized_files_are_refused_with_a_reason(polyglot):
    files = {f.path: f for f in discover(polyglot, IndexSettings())}
    with pytest.raises(SkippedFile, match="binary"):
        read_text_file(files["assets/logo.py"], IndexSettings())
    with pytest.raises(SkippedFile, match="over the 1000000-byte cap"):
        read_text_file(files["huge.txt"], IndexSettings())
    # a private key and an Ansible vault are never indexed (previews, an agent's answers, a shared store); a test
    # that holds a key among its code is code
    (polyglot / "AuthKey_ABC123.p8").write_text("-----BEGIN PRIVATE KEY-----\nMIGTAgEAMBMGByqGSM49\n"
                                                "-----END PRIVATE KEY-----\n")
    (polyglot / "secrets.yml").write_text("$ANSIBLE_VAULT;1.1;AES256\n6338643265363536\n")
    (polyglot / "test_sign.py").write_text('KEY = """-----BEGIN RSA PRIVATE KEY-----\nMIIE\n"""\n'
                                          "def test_sign():\n    assert sign(KEY)\n")
    found = {f.path: f for f in discover(polyglot, IndexSettings())}
    with pytest.raises(SkippedFile, match="a private key, never indexed"):
        read_text_file(found["AuthKey_ABC123.p8"], IndexSettings())
    with pytest.raises(SkippedFile, match="an encrypted Ansible vault, never indexed"):
        read_text_file(found["secrets.yml"], IndexSettings())
    assert "def test_sign" in read_text_file(found["test_sign.py"], IndexSettings())[1]
    # a large asset is binary first: counted with the binaries, not listed on its own line as too large
    (polyglot / "music.ogg").write_bytes(b"OggS\x00\x02" + b"\x7f" * 1_200_000)
    music = next(f for f in discover(polyglot, IndexSettings()) if f.path == "music.ogg")
    with pytest.raises(SkippedFile, match=r"binary \(a NUL byte at byte 4\)"):
        read_text_file(music, IndexSettings())
    # a PDF (an Illustrator file) opens with kilobytes of text metadata; its binary streams come later
    (polyglot / "media").mkdir()
    (polyglot / "media" / "logo.ai").write_bytes(b"%PDF-1.6\n<x:xmpmeta>" + b"<rdf:li>metadata</rdf:li>\n" * 800
                                                 + b"stream\n\x78\x9c\x00\x01binary")
    late = next(f for f in discover(polyglot, IndexSettings()) if f.path == "media/logo.ai")
    with pytest.raises(SkippedFile, match=r"binary \(a NUL byte at byte 2\d{4}\)"):
        read_text_file(late, IndexSettings())


def test_non_utf8_text_is_decoded_with_replacement(polyglot):
    files = {f.path: f for f in discover(polyglot, IndexSettings())}
    _, text = read_text_file(files["src/legacy.py"], IndexSettings())
    assert text.startswith("def caf\ufffd_menu():")


def test_utf16_with_its_mark_is_text_and_a_notebook_is_measured_without_its_outputs(polyglot):
    """Windows editors and PowerShell write UTF-16 with a byte-order mark: its NUL bytes made it binary.
    A notebook's outputs (base64 images) are most of its bytes, and they are never read."""
    import json

    from noul_lsp.lsp.convert import FileLines
    from noul_lsp.retrieval.answer import lines_from_disk

    source = "def registry_path():\n    return 'HKEY_CURRENT_USER\\\\Software'\n"
    (polyglot / "src" / "winreg_env.py").write_bytes(source.encode("utf-16"))
    (polyglot / "src" / "big_endian.py").write_bytes(b"\xfe\xff" + source.encode("utf-16-be"))
    (polyglot / "src" / "odd.py").write_bytes(b"\xff\xfe\x00\xd8a")  # a mark, then a lone surrogate and no text
    settings = IndexSettings(max_file_bytes=50_000)
    notebook = {"cells": [{"cell_type": "code", "source": ["def report():\n", "    return 1\n"], "metadata": {},
                           "outputs": [{"data": {"image/png": "A" * 200_000}}], "execution_count": 1}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (polyglot / "notebooks" / "report.ipynb").write_text(json.dumps(notebook, indent=1))
    files = {f.path: f for f in discover(polyglot, settings)}
    for path in ("src/winreg_env.py", "src/big_endian.py"):
        _, text = read_text_file(files[path], settings)
        assert text == source
        assert lines_from_disk(str(polyglot), path)[0] == FileLines()(str(polyglot), path)[0] == "def registry_path():"
    with pytest.raises(SkippedFile, match="binary"):
        read_text_file(files["src/odd.py"], settings)
    assert "def report()" in read_text_file(files["notebooks/report.ipynb"], settings)[1]
    with pytest.raises(SkippedFile, match="over the 50000-byte cap"):
        read_text_file(files["huge.txt"], settings)


def test_unreadable_file_is_a_transient_skip(polyglot):
    files = {f.path: f for f in discover(polyglot, IndexSettings())}
    target = files["src/net/retry.py"]
    target.absolute.unlink()
    with pytest.raises(SkippedFile) as caught:
        read_text_file(target, IndexSettings())
    assert caught.value.transient


def test_links_out_fifos_and_broken_links_are_passed_over_with_a_reason(polyglot):
    os.mkfifo(polyglot / "events.fifo")
    passed_over: list[str] = []
    found = {f.path for f in discover(polyglot, IndexSettings(), passed_over)}
    assert not {"events.fifo", "broken_link.py", "outside_link.py", "loop"} & found
    reasons = dict(line.split(": ", 1) for line in passed_over)
    assert reasons["events.fifo"] == "a FIFO, not a regular file"
    assert "broken" in reasons["broken_link.py"] and "out of the workspace" in reasons["outside_link.py"]
    assert "src/net/retry.py" in found and not any(p.startswith("src/") for p in reasons)


def test_an_invalid_gitignore_line_is_passed_over_not_fatal(tmp_path):
    """black's own tests carry a .gitignore of a lone `!`: git passes it over, and so must the walk."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("!\n*.log\n")
    (tmp_path / "sub" / "kept.py").write_text("x = 1\n")
    (tmp_path / "sub" / "run.log").write_text("noise\n")
    found = {f.path for f in discover(tmp_path, IndexSettings())}
    assert "sub/kept.py" in found
    assert "sub/run.log" not in found


@pytest.mark.parametrize("layout", ["polyglot", "polyglot_git"])
def test_named_paths_are_discovered_by_the_same_rules_as_the_whole_tree(layout, request):
    """A save looks only at what was saved: the answer for those paths is the whole walk's, restricted."""
    root: Path = request.getfixturevalue(layout)
    whole = {f.path for f in discover(root, IndexSettings())}
    asked = ["src/net/retry.py", "run.log", "src", "generated/out.py", "docs/private.md", "missing.py",
             "loop/inner.py", "outside_link.py", ".git/config"]
    named = {f.path for f in discover(root, IndexSettings(), paths=asked)}
    expected = {p for p in whole if p in asked or p.startswith("src/")}
    assert named == expected
    assert "src/net/retry.py" in named and "run.log" not in named


def test_a_folder_the_walk_may_not_look_into_is_passed_over_not_fatal(tmp_path, monkeypatch):
    """`Path.is_file` raises on a folder one may not look into (EACCES; as root, for one, /proc/1/fdinfo):
    a workspace at / failed its whole pass on it. The OS's refusal is injected (the tests run as root, whom
    permission bits do not stop)."""
    from pathlib import Path

    (tmp_path / "closed").mkdir()
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "kept.py").write_text("x = 1\n")
    is_file = Path.is_file

    def refusing(path):
        if path.parent.name == "closed":
            raise PermissionError(13, "Permission denied", str(path))
        return is_file(path)

    monkeypatch.setattr(Path, "is_file", refusing)
    assert "open/kept.py" in {f.path for f in discover(tmp_path, IndexSettings())}


@pytest.mark.parametrize("layout", ["polyglot", "polyglot_git"])
def test_whether_a_root_lists_a_folder_inside_it(layout, request):
    """The language server serves a workspace folder inside another from that one's index only where the
    outer scan lists the folder's files: not an ignored or excluded folder, nor (under git) a repository of
    its own."""
    from noul_lsp.workspace.discovery import lists_folder

    root: Path = request.getfixturevalue(layout).resolve()
    settings = IndexSettings()
    assert lists_folder(root, root / "src", settings) and lists_folder(root, root / "web" / "src", settings)
    assert lists_folder(root, root, settings) and not lists_folder(root / "src", root, settings)
    assert not lists_folder(root, root / "generated", settings)  # .gitignore
    (root / "node_modules" / "left").mkdir(parents=True)
    assert not lists_folder(root, root / "node_modules" / "left", settings)  # a default exclude
    assert not lists_folder(root, root / "web", IndexSettings(exclude=("web/",)))  # a configured one
    (root / "web" / "vendored" / "lib").mkdir(parents=True)  # a repository of its own (a clone, a submodule)
    subprocess.run(["git", "init", "-q"], cwd=root / "web" / "vendored", check=True)
    (root / "web" / "vendored" / "lib" / "pad.js").write_text("export const pad = (s) => s;\n")
    # git lists nothing inside it, the walk (outside git) enters it: as the scan does, so lists_folder
    listed = any(f.path.startswith("web/vendored/") for f in discover(root, settings))
    assert listed == (layout == "polyglot")
    assert lists_folder(root, root / "web" / "vendored", settings) == listed
    assert lists_folder(root, root / "web" / "vendored" / "lib", settings) == listed
    if layout == "polyglot_git":  # ignored where only git looks (.git/info/exclude)
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text("scratch/\n")
        (root / "scratch").mkdir()
        (root / "scratch" / "notes.py").write_text("x = 1\n")
        assert not lists_folder(root, root / "scratch", settings)
        assert not any(f.path.startswith("scratch/") for f in discover(root, settings))


def test_a_checkouts_thousands_of_changed_paths_are_listed_by_git_rules(tmp_path):
    """A branch switch names thousands of paths at once: in one `git ls-files` command line they passed the
    system's argument limit, git did not start, and the walk's .gitignore rules alone decided (a folder
    ignored by .git/info/exclude was indexed, a tracked file matching a .gitignore dropped)."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kept.py").write_text("x = 1\n")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "config.py").write_text("y = 2\n")
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("gen/\n")  # tracked before it was ignored: git still lists it
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch/\n")
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "notes.py").write_text("z = 3\n")
    # 9,000 changed paths of 250 bytes (deleted files: git lists none of them) are past 2 MB of arguments
    changed = ["src/kept.py", "gen", "scratch/notes.py",  # a folder named: the files under it
               *(f"old/{'d' * 240}/{n}.py" for n in range(9000))]
    found = {f.path for f in discover(tmp_path, IndexSettings(), paths=changed)}
    assert found == {"src/kept.py", "gen/config.py"}


def test_a_notebook_past_the_cap_is_read_only_as_a_notebook(polyglot):
    """A notebook may be 20 times the cap because its outputs are never read; one that is not JSON (a merge
    conflict's markers) would be cut whole, base64 outputs and all."""
    settings = IndexSettings(max_file_bytes=50_000)
    (polyglot / "notebooks" / "conflicted.ipynb").write_text("<<<<<<< HEAD\n" + '{"cells": []}' + "A" * 200_000)
    files = {f.path: f for f in discover(polyglot, settings)}
    with pytest.raises(SkippedFile, match="over the 50000-byte cap and not a notebook's JSON"):
        read_text_file(files["notebooks/conflicted.ipynb"], settings)
