"""The ranking stage: query analysis, file roles, candidate features on small real workspaces, the fit on
synthetic data with a known answer, and the fallback to fusion without a fitted file."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from noul_lsp.bench.rank_fit import _training, load_candidates
from noul_lsp.chunking import FileChunker
from noul_lsp.chunking.chunk import OBJECTS_KIND
from noul_lsp.config import IndexSettings, parse_settings
from noul_lsp.retrieval.analyse import analyse
from noul_lsp.retrieval.features import FEATURES, root_features
from noul_lsp.retrieval.fusion import fuse
from noul_lsp.retrieval.rank import RankingQuery, RankModel, fit_rank_model, rank_candidates, untrained_model
from noul_lsp.retrieval.retrieve import retrieve
from noul_lsp.retrieval.roles import (
    ROLES,
    asked_tool_terms,
    chart_folders,
    file_role,
    query_asks_for,
    role_codes,
    roles_read_as_source,
    with_charts,
)
from noul_lsp.session.workspace import Workspace

SOURCE = '''"""Cookie handling."""


class CookieJar:
    """Keeps cookies between requests."""

    def persist(self, path):
        """Write every cookie to disk."""
        with open(path, "w") as handle:
            handle.write(str(self.items))


def extract_cookies(response, jar):
    """Copy the cookies a response set into the jar."""
    for header in response.headers:
        jar.items.append(header)
'''

TESTS = '''from pkg.cookies import CookieJar, extract_cookies


def test_extract_cookies_keeps_cookies():
    jar = CookieJar()
    extract_cookies(response(), jar)
    extract_cookies(response(), jar)
    assert jar.items


def test_persisted_cookies_survive():
    jar = CookieJar()
    extract_cookies(response(), jar)
    jar.persist("cookies.txt")
'''


def _embedded_workspace(root, tmp_path) -> Workspace:
    """A workspace of `root` indexed and embedded whole, its cache under `tmp_path`."""
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    workspace.indexer.embed_pending(workspace.embedder())
    return workspace


@pytest.fixture
def cookie_workspace(tmp_path):
    root = tmp_path / "shop"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "cookies.py").write_text(SOURCE)
    (root / "src" / "pkg" / "orders.py").write_text("def place_order(cart):\n    return cart.total()\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_cookies.py").write_text(TESTS)
    (root / "third_party" / "copy").mkdir(parents=True)
    shutil.copy(root / "src" / "pkg" / "cookies.py", root / "third_party" / "copy" / "cookies.py")
    (root / "docs").mkdir()
    (root / "docs" / "cookies.md").write_text("# Cookies\n\nCookies are persisted between requests by the jar.\n")
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    yield workspace
    workspace.close()


def candidate_rows(workspace: Workspace, query: str) -> dict[str, dict[str, float]]:
    """The ranking stage's feature row of each candidate file, by path (lexical retrieval only)."""
    arrays = workspace.loaded()
    candidate = retrieve(workspace, analyse(query), arrays, legs=("bm25",), include=(), exclude=(), query_vectors={},
                         stage=lambda name, started: None, notes=[])
    fused = fuse([candidate.bm25], [candidate.dense], size=200, rrf_k=60)
    ranking = rank_candidates(untrained_model(""), [candidate], fused, analyse(query), mode="files", rrf_k=60,
                              record=True)
    names = ranking.record["features"]
    return {path: dict(zip(names, row, strict=True))
            for path, row in zip(ranking.record["files"], ranking.record["matrix"], strict=True)}


def test_roles_come_from_paths():
    assert file_role("src/requests/cookies.py") == "source"
    assert file_role("tests/test_cookies.py") == "test"
    assert file_role("src/_pytest/python_api.py") == "source"
    assert file_role("lib/router/index_test.go") == "test"
    assert file_role("web/src/app.spec.ts") == "test"
    assert file_role("docs/user/quickstart.rst") == "docs"
    assert file_role("examples/hello.rs") == "example"
    assert file_role("java/com/example/imaging/Thumbnailer.java") == "source"
    assert file_role("CHANGELOG.md") == "changelog"
    assert file_role("changelog/1234.bugfix.rst") == "changelog"
    assert file_role("pyproject.toml") == "config"
    assert file_role("dist/bundle.js") == "generated"
    # a service's schema and interfaces are its source (SQL migrations, protobuf, GraphQL; Starlark macros), its
    # build files config; buf's generation settings are no generator's output; a test's SQL stays a test's
    assert {file_role(p) for p in ("migrations/20221003041349_add_mfa_schema.up.sql", "api/v1/echo.proto",
                                   "schema.graphql", "protoc-gen-openapiv2/defs.bzl")} == {"source"}
    assert {file_role(p) for p in ("BUILD.bazel", "runtime/BUILD", "MODULE.bazel", "WORKSPACE", "buf.yaml",
                                   "buf.gen.yaml", "examples/internal/proto/examplepb/opaque.buf.gen.yaml")} == {"config"}
    assert file_role("tests/fixtures/seed.sql") == "test" and file_role("api/echo.pb.go") == "generated"
    assert file_role("proto/api_pb2.py") == "generated"
    assert file_role("notebooks/sales.ipynb") == "notebook"
    assert file_role("client/doc.go") == "docs" and file_role("internal/docs.go") == "source"  # Go's package docs
    # the test conventions of the other grammars' ecosystems, matched on the path's own case
    assert file_role("src/Polly.Core.Tests/Retry/RetryStrategyTests.cs") == "test"
    assert file_role("src/AdapterTestUtilities/FilesystemAdapterTestCase.php") == "test"
    assert file_role("kotlinpoet/src/jvmTest/kotlin/com/squareup/kotlinpoet/FileSpecTest.kt") == "test"
    assert file_role("kotlinpoet/src/jvmMain/kotlin/com/squareup/kotlinpoet/TypeSpec.kt") == "source"
    assert file_role("Sources/Cache/ImageCache.swift") == "source"
    assert file_role("src/main/java/org/acme/Latest.java") == "source"
    assert file_role("hspec-core/src/Test/Hspec/Core/Runner.hs") == "source"  # a module namespace
    assert file_role("hspec-core/test/Test/Hspec/Core/RunnerSpec.hs") == "test"
    assert file_role("src/router.zig") == "source" and file_role("build.zig") == "config"
    assert file_role("libexec/bats-core/bats-exec-test") == "source" and file_role("LICENSE") == "other"
    assert file_role("doc/data/messages/m/missing-parentheses-for-call-in-test/good.py") == "docs"
    assert file_role("docs/conf.py") == "docs" and file_role("doc/en/example/assertion/failure_demo.py") == "example"
    assert file_role("doc/man_docs.go") == "source"  # the Go package `doc`: a generator, not documentation
    assert file_role("doc/man_docs_test.go") == "test"
    # code named like a changelog is code (telescope's actions/history.lua, sphinx's builders/changes.py)
    assert file_role("lua/telescope/actions/history.lua") == "source" and file_role("HISTORY.md") == "changelog"
    assert file_role("sphinx/builders/changes.py") == "source" and file_role("hack/release") == "source"
    # generators' names: Kubernetes' zz_generated, Go's *_gen.go (a Python data_gen.py is the generator)
    assert file_role("api/v1/zz_generated.deepcopy.go") == "generated" and file_role("msg_gen.go") == "generated"
    # Dart's build_runner parts; the model written by hand, and a config written by hand, are source (a
    # generator's `di.config.dart` says so in its head)
    assert {file_role(p) for p in ("lib/model/user.g.dart", "lib/model/user.freezed.dart",
                                   "test/api.mocks.dart")} == {"generated"}
    assert {file_role(p) for p in ("lib/model/user.dart", "lib/config.dart", "lib/app.config.dart")} == {"source"}
    # a Dart package's library is source whatever its name (`bloc_test`'s `blocTest`); its tests are tests
    assert file_role("packages/bloc_test/lib/src/bloc_test.dart") == "source"
    assert file_role("packages/bloc_test/test/bloc_test_test.dart") == "test"
    assert file_role("test/fixtures/pkg/lib/main.dart") == "test"  # a test's fixture package
    assert file_role("integration_test/robots/home_robot.dart") == file_role("test_driver/app.dart") == "test"
    # an app's platform settings are config, a settings file named like a release no changelog
    assert {file_role(p) for p in ("ios/Runner/Info.plist", "ios/Runner/Runner.entitlements", "ios/Flutter/Release.xcconfig",
                                   "lib/l10n/app_en.arb", "ios/Podfile", "release.toml",
                                   "release-please-config.json", "release-drafter.yml")} == {"config"}
    assert file_role("RELEASES.md") == file_role("CHANGELOG.json") == file_role("changes.xml") == "changelog"
    assert file_role("tools/data_gen.py") == "source" and file_role("umd/express.js") == "generated"
    assert file_role("scripts/manage") == "source" and file_role("test/bin/run") == "test"
    # an MVC app's: a package below a main source set is no examples folder (Spring PetClinic's
    # `org/springframework/samples/`), MyBatis' mappers and rake tasks are source, Rails' migrations its history
    assert file_role("src/main/java/org/springframework/samples/petclinic/owner/Owner.java") == "source"
    assert file_role("samples/petclinic/src/main/java/Owner.java") == file_role("examples/app.rb") == "example"
    assert file_role("src/main/resources/mapper/UserMapper.xml") == file_role("lib/tasks/privacy_wipe.rake") == "source"
    assert file_role("src/test/resources/mapper/UserMapper.xml") == "test" and file_role("pom.xml") == "config"
    assert file_role("src/main/resources/com/example/demo/mapper/UserMapper.xml") == "source"  # Spring Initializr's
    assert file_role("app/src/main/res/layout/activity_mapper.xml") == "config"
    assert file_role("mybatis/mybatis-config.xml") == "config"
    assert file_role("db/migrate/20260613002038_add_quorum_to_tags.rb") == "generated"
    assert file_role("db/schema.rb") == file_role("app/models/migration_helper.rb") == "source"
    assert file_role("Data/Migrations/20211231093753_FixShipToAddress.cs") == "generated"  # EF Core's
    assert file_role("Data/Migrations/20211231093753_FixShipToAddress.Designer.cs") == "generated"
    assert file_role("src/BlazorAdmin/Pages/CatalogItemPage/List.razor") == "source"  # a component, as Vue's
    # test doubles and test-support folders by name (flysystem's S3ClientStub.php in src/), a library's own
    # mocking module stays source; DocC tutorial steps are docs, a per-version Swift manifest config
    assert file_role("src/AwsS3V3/S3ClientStub.php") == "test" and file_role("src/Stub/StubZipArchive.php") == "test"
    assert file_role("lib/test-helpers/context.js") == "test" and file_role("httpx/_transports/mock.py") == "source"
    assert file_role("src/Faker.php") == "source" and file_role("src/MockingBird.php") == "source"
    assert file_role("src/main/java/org/mockito/Mock.java") == "source" and file_role("src/modernFakeTimers.ts") == "source"
    assert file_role("latest_helpers/x.py") == "source" and file_role("bundled/tool/lsp_server.py") == "source"
    assert file_role("src/AdapterTestUtilities/RetryOnTestException.php") == "test"
    assert file_role("Sources/Documentation.docc/Resources/code-files/01-ViewController-1.swift") == "docs"
    assert file_role("Package@swift-5.9.swift") == "config"
    # below a main source set a folder is a package (kotlinpoet's metadata module keeps its source in `specs/`)
    assert file_role("interop/kotlin-metadata/src/main/kotlin/com/squareup/kotlinpoet/metadata/specs/KmTypes.kt") \
        == "source"
    assert file_role("lib/src/commonMain/kotlin/org/acme/testing/Fakes.kt") == "source"
    assert file_role("lib/src/commonTest/kotlin/org/acme/FakesTest.kt") == "test"
    # a Terraform module's blocks are its code; its variables' values config, its `.tftest.hcl` files tests
    assert file_role("modules/eks/main.tf") == "source" and file_role("envs/prod.tfvars") == "config"
    assert file_role("basic.tftest.hcl") == "test" and file_role("examples/complete/main.tf") == "example"
    # a Helm chart's templates are its code (its named templates, its manifests) and its values its interface, beside
    # its Chart.yaml; a templates folder of anything else (CI templates, a web framework's pages) keeps its role
    chart = ["charts/grafana/Chart.yaml", "charts/grafana/templates/_helpers.tpl", "charts/grafana/templates/deploy.yaml",
             "charts/grafana/values.yaml", "charts/grafana/ci/default-values.yaml", "charts/grafana/templates/tests/t.yaml",
             "ci/templates/build.yml", "config/values.yml", "app/templates/index.html", "lib/mail.tpl",
             "charts/grafana/values.schema.json"]
    assert [ROLES[code] for code in role_codes(chart)] == [
        "config", "source", "source", "source", "config", "test", "config", "config", "other", "other", "config"]
    assert file_role("charts/grafana/templates/deploy.yaml") == "config"  # the path alone does not tell
    # a chart found in one part of the corpus reads the files of another (a file edited since the last index is
    # in the delta, its Chart.yaml in the base); a folder named like a template folder is a chart's folder
    edited = ["charts/grafana/templates/deploy.yaml", "helm-templates/templates/svc.yaml"]
    codes = role_codes(edited)
    assert [ROLES[c] for c in codes] == ["config", "config"]
    charts = chart_folders(["charts/grafana/Chart.yaml", "helm-templates/Chart.yaml"])
    assert [ROLES[c] for c in with_charts(codes, edited, charts)] == ["source", "source"]
    # a Go template in a templates folder is source where the workspace renders them (Terraform, Helm), not a
    # web app's page
    rendered = ["main.tf", "templates/windows_user_data.tpl"]
    assert [ROLES[c] for c in role_codes(rendered)] == ["source", "source"]
    assert ROLES[role_codes(["themes/shop/templates/product.tpl", "index.php"])[0]] == "other"
    # a Dockerfile's variants and a Jenkinsfile are config; Terraform's provider lock is no module's code
    assert file_role("Dockerfile.dev") == "config" and file_role("Jenkinsfile") == "config"
    assert file_role("Dockerfile.md") == "docs" and file_role("infra/.terraform.lock.hcl") == "config"
    assert file_role("src/domain/spec/x_spec.rb") == "test"  # `domain` is no source set
    assert file_role("src/parser.y") == "source" and file_role("src/lexer.l") == "source"  # Bison's, flex's sources
    # a TypeScript monorepo's conventions: jscodeshift's fixtures, Jest's doubles and a runner's set-up are
    # tests, a tool's configuration written as code is config, a workflow named release.yml is no changelog
    assert file_role("packages/codemods/src/v5/x/__testfixtures__/named.output.tsx") == "test"
    assert file_role("packages/vue-query/src/__mocks__/useQueryClient.ts") == "test"
    assert file_role("packages/react-query/test-setup.ts") == "test" and file_role("src/setupTests.js") == "test"
    assert file_role("packages/react-query/vite.config.ts") == "config" and file_role(".eslintrc.cjs") == "config"
    assert file_role("eslint.config.js") == "config" and file_role("karma.conf.js") == "config"
    assert file_role("src/load-config.ts") == "source" and file_role("src/config.py") == "source"
    assert file_role("src/app/app.config.ts") == "source" and file_role("webpack.config.babel.js") == "config"
    assert file_role("tests/fixtures/vite.config.ts") == "test" and file_role("src/main/java/a/TestSetup.java") == "source"
    # Django's migrations are written by makemigrations (a query naming migrations reads them as source)
    assert file_role("hc/api/migrations/0042_check_grace.py") == "generated"
    assert file_role("hc/api/migrations/__init__.py") == "source" and file_role("hc/api/models.py") == "source"
    # pip's requirement files are config, not documentation
    assert file_role("requirements-dev.txt") == "config" and file_role("requirements/base.txt") == "config"
    assert file_role(".github/workflows/release.yml") == "config" and file_role("release-notes.md") == "changelog"
    # a page under .github is docs; a test's data is the test's, whatever its kind, but in a docs folder or a dot file
    assert file_role(".github/SECURITY.md") == "docs" and file_role(".github/ISSUE_TEMPLATE/bug.md") == "docs"
    assert file_role("caddyconfig/caddyfile/testdata/import_glob0.txt") == "test"
    assert file_role("tests/static/config.json") == "test" and file_role("__tests__/.eslintrc.yml") == "config"
    assert file_role("doc/guide/tests/writing_test.rst") == "docs"
    assert file_role("caddytest/integration/caddyfile_adapt/reverse_proxy.caddyfiletest") == "test"
    # Go's fuzz harnesses and a repository's fuzzing folder, and a test's mocks, are tests
    assert file_role("caddyconfig/caddyfile/lexer_fuzz.go") == "test" and file_role("fuzzing/afl.c") == "test"
    assert file_role("internal/testmocks/dummyverifier.go") == "test" and file_role("mock/server.go") == "source"
    # but a manifest in a test folder is config, a README docs, a folder named fuzz below the top a package, a
    # spec folder's specification docs, and `.latest` no kind of test
    assert file_role("fuzz/Cargo.toml") == "config" and file_role("tests/package.json") == "config"
    assert file_role("tests/Dockerfile") == "config" and file_role("tests/README.md") == "docs"
    assert file_role("src/fuzz/mod.rs") == "source" and file_role("internal/fuzz/worker.go") == "source"
    assert file_role("specs/protocol.md") == "docs" and file_role("Dockerfile.latest") == "config"
    # an example whatever its kind (a justfile, a template), but its README
    assert file_role("examples/cross-platform.just") == "example" and file_role("examples/README.md") == "docs"
    # a role no label asks for is read as source by a query that names it (the ranker has no asking weight)
    assert roles_read_as_source(analyse("the vendored werkzeug safe_join").terms) == ["generated"]
    assert roles_read_as_source(analyse("shortest float to string in the bundled fmt").terms) == ["generated"]
    assert roles_read_as_source(analyse("the notebook that plots monthly revenue").terms) == ["notebook"]
    assert roles_read_as_source(analyse("where are CSRF tokens generated").terms) == []
    assert roles_read_as_source(analyse("the migration that adds the grace field").terms) == ["generated"]
    # a query naming a tool asks for its files (the ranker's weight for naming config is against config):
    # continuous integration, not seaborn's confidence interval argument; Docker, Make, env files, Bazel, buf
    assert "workflows" in asked_tool_terms("which workflow publishes the chart release")
    assert "workflows" in asked_tool_terms("the CI job that lints charts")
    assert asked_tool_terms("set the ci parameter of barplot") == asked_tool_terms("where are cookies persisted") == ()
    assert asked_tool_terms("which workflow publishes the release", "long") == ()
    assert "dockerfile" in asked_tool_terms("Dockerfile that copies migrations to /usr/local/etc")
    assert "compose" in asked_tool_terms("docker compose service for the local postgres database")
    assert "makefile" in asked_tool_terms("make target that runs database migrations")
    assert asked_tool_terms("example env file with the SMTP host") == ("env",)
    assert "bazel" in asked_tool_terms("Bazel rule that runs protoc-gen-openapiv2")
    assert asked_tool_terms("buf lint rule exceptions") == ("buf",)
    assert asked_tool_terms("where is buf[i] freed") == asked_tool_terms("make sure the buffer is flushed") == ()
    # a mobile app's platform settings and translations: Gradle, pub, Android's manifest, Apple's plists, l10n
    assert "gradle" in asked_tool_terms("release signing config read from key.properties in the Android build")
    for elsewhere in ("parse the Cargo manifest of a workspace member", "reject urls whose URL scheme is not http",
                      "does the user have the entitlement to download", "format a localized date string",
                      "JWT signing config", "write a plist with plistlib"):
        assert asked_tool_terms(elsewhere) == (), elsewhere
    assert "gradle" in asked_tool_terms("raise minSdkVersion to 24")
    assert "recurring" in asked_tool_terms("schedule of recurring background jobs")  # Rails' `config/recurring.yml`
    assert asked_tool_terms("connection strings for the catalog and identity databases") == ("appsettings",)
    assert asked_tool_terms("which Flutter SDK versions does the pubspec require") == ("pubspec",)
    assert "androidmanifest" in asked_tool_terms("which intent filters accept shared files")
    assert "plist" in asked_tool_terms("iOS local network usage description") and \
        "plist" in asked_tool_terms("Google sign-in URL scheme in the Info.plist")
    assert "l10n" in asked_tool_terms("localized string for the app bar title")
    assert asked_tool_terms("translate help text into the user's language") == ()  # the code that translates
    assert "cmake" in asked_tool_terms("the CMake function that generates a header from a PIO program")
    assert [file_role(p) for p in ("src/crt0.S", "portable/GCC/portASM.asm", "rp2040/memmap_default.ld")] == [
        "source"] * 3  # a firmware's reset handler, context switch and memory map are its code
    # `external/` holds copied libraries in C and C++ projects; elsewhere a project's own code about outside services
    assert [file_role(p) for p in ("src/external/miniaudio.h", "src/external/glfw/src/window.c",
                                   "external/terraform/main.tf", "external/Makefile")] == [
        "generated", "generated", "source", "config"]
    # and their other names for it: spdlog's copy of fmt was 55% of its chunks, first for its own colour codes
    copies = ("include/spdlog/fmt/bundled/color.h", "deps/lua/src/lapi.c", "3rdparty/stb.h", "extern/pybind11/a.h",
              "extern/range/view.h++", "deps/fmt/format.cppm")  # every suffix the chunker reads as C or C++
    assert [file_role(p) for p in (*copies, "deps/tool.py")] == ["generated"] * 6 + ["source"]
    # a copied release by its folder's version; below a test folder a test still (weighed down more than a copy)
    releases = ("zlib-1.3.1/inflate.c", "third/lua-5.4.6/src/lapi.c", "src/v2-1.0/a.py", "test/googletest-1.16.0/a.cc")
    assert [file_role(p) for p in releases] == ["generated", "generated", "source", "test"]
    # a game's scripts and shaders are its code (a C# demo of the same project outranked them as `other`)
    assert [file_role(p) for p in ("player/player.gd", "shaders/dissolve.gdshader", "crt.frag", "water.glsl")] == [
        "source"] * 4
    # an example asked for outright reads examples as source; "for example" in passing does not
    for asking in ("an example of infinite scrolling in React", "the pagination demo", "examples using the persister",
                   "show me an example of optimistic updates", "infinite scroll example",
                   "where is the infinite list example that fetches posts", "example script that saves a table",
                   "example code with a Bird class"):
        assert roles_read_as_source(analyse(asking).terms, "description", asking) == ["example"]
    for passing in ("retry the upload, for example on a timeout", "parse the examples in a docstring",
                    "training examples for the classifier", "number of examples", "examples",
                    "tokenize each example that is longer than the context", "drop any training example that has no label"):
        assert roles_read_as_source(analyse(passing).terms, "description", passing) == [], passing
    assert query_asks_for(analyse("the test that checks cookie expiry").terms)["test"]
    assert query_asks_for(analyse("fuzz target that parses random input").terms)["test"]
    assert not query_asks_for(analyse("where are cookies persisted").terms)["test"]
    # an MVC app's tests asked for by their framework, its settings files by what they set
    for asking in ("rspec tests for story model validations", "request specs for logging in",
                   "MockMvc test for updating and deleting an article", "xUnit test for adding an item to the basket",
                   "PHPUnit feature test for uploading a song", "functional test that adds an item to the cart"):
        assert roles_read_as_source(analyse(asking).terms, "description", asking) == ["test"], asking
    for asking in ("JWT secret and session lifetime settings", "datasource settings for the PostgreSQL profile"):
        assert roles_read_as_source(analyse(asking).terms, "description", asking) == ["config"], asking
    for passing in ("database configuration from environment variables", "chart-testing configuration file",
                    "load configuration from environment variables with the FLASK_ prefix",
                    "Spring Security configuration",
                    "CSS properties of the button", "parse the HTTP request specs", "set up the jest test runner",
                    "hardware system specs detection", "change Matplotlib's default settings with rcParams",
                    "save the user's notification settings"):
        assert roles_read_as_source(analyse(passing).terms, "description", passing) == [], passing


def test_an_ansible_projects_templates_and_inventories_have_roles():
    """A Jinja2 template a role renders was `other`, under the playbook that copies it (a question about a
    varnish backend list found the playbook first), and an INI inventory was `other` too."""
    assert file_role("metal/roles/k3s/templates/config.yaml.j2") == "source"
    assert file_role("lamp-infrastructure/playbooks/varnish/templates/default.vcl.j2") == "source"
    assert file_role("docs/snippets/config.j2") == "docs" and file_role("tests/fixtures/vhost.j2") == "test"
    assert file_role("lamp-infrastructure/inventories/vagrant/inventory") == "config"
    assert file_role("hosts") == "config" and file_role("scripts/inventory") == "source"
    assert file_role("templates/index.html") == "other"


def test_an_android_apps_flavours_and_a_mobile_apps_settings_have_roles():
    """nowinandroid's `src/prod/` and `src/demo/` source sets were examples (its package `com/google/samples/...`
    and a flavour named `demo`), its `src/testDemo/` too; ProGuard's rules, Xcode's schemes and iOS's strings
    were `other`, and a demo feed `news.json` a changelog."""
    prod = "core/analytics/src/prod/kotlin/com/google/samples/apps/nia/core/analytics/FirebaseAnalyticsHelper.kt"
    assert file_role(prod) == "source"
    assert file_role("core/analytics/src/demo/kotlin/com/google/samples/apps/nia/AnalyticsModule.kt") == "source"
    assert file_role("core/datastore-proto/src/main/proto/com/google/samples/apps/nia/theme_brand.proto") == "source"
    assert file_role("app/src/testDemo/kotlin/com/google/samples/apps/nia/ui/Insets.kt") == "test"
    assert file_role("app/src/androidTest/kotlin/com/example/NavigationTest.kt") == "test"
    assert file_role("samples/demo/src/main/kotlin/App.kt") == "example"  # an example project stays one
    assert {file_role(p) for p in ("app/proguard-rules.pro", "App.xcodeproj/xcshareddata/xcschemes/App.xcscheme",
                                   "Ext/en.lproj/InfoPlist.strings", "App/Localizable.xcstrings",
                                   "App.xcworkspace/xcshareddata/swiftpm/Package.resolved",
                                   "core/network/src/main/assets/news.json")} == {"config"}
    assert file_role("NEWS.md") == "changelog" and file_role("NEWS") == "changelog"
    # the tools a mobile developer names read their files as source: Xcode's schemes, the version catalog, R8's rules
    assert asked_tool_terms("Xcode scheme for the notification service extension") == ("xcscheme", "xcschemes")
    assert asked_tool_terms("what version of Room are we on in the version catalog") == ("versions",)
    assert asked_tool_terms("R8 keep rules for the release app") == ("proguard", "rules")
    assert asked_tool_terms("how is the release build signed") == ("gradle",)
    assert asked_tool_terms("signing key for JWT") == ()
    assert "entitlements" in asked_tool_terms("push notification entitlement of the main app")


def test_an_elixir_and_a_haskell_projects_settings_and_migrations_have_roles():
    """hexpm's `config/test.exs` was a test (its siblings, code run at boot, source); its Ecto migrations took the
    first three places for "Ecto schema for package owners"; PostgREST's `.cabal` and Nix files were `other`."""
    assert {file_role(p) for p in ("config/config.exs", "config/test.exs", "apps/web/config/runtime.exs")} == {
        "source"}
    assert {file_role(p) for p in ("postgrest.cabal", "cabal.project", "flake.nix", "nix/static.nix")} == {"config"}
    assert file_role("priv/repo/migrations/20140623215331_add_package_owners_table.exs") == "generated"
    assert file_role("lib/hexpm/config.ex") == "source" and file_role("test/hexpm/accounts_test.exs") == "test"


def test_a_data_teams_warehouse_and_dags_are_its_code():
    """A data engineer's answers are a dbt project's macros (a generic test's too), its settings, Airflow's DAG
    files, its models' properties when asked for, its runbooks: as tests, config and docs they were buried under
    the code that uses them (cal-itp's generic test 98th, first and second in the legs)."""
    paths = ["warehouse/dbt_project.yml", "warehouse/models/mart/_mart_audit.yml",
             "warehouse/macros/test_unique_proportion.sql", "warehouse/tests/test_order.sql",
             "macros/generic_tests/equality.sql", "integration_tests/macros/assert_equal.sql",
             "airflow/dags/sync_feed/METADATA.yml", ".github/workflows/ci.yml",
             "warehouse/models/fct_funding_sources_directly_generated.sql", "src/api_generated.go"]
    assert [ROLES[code] for code in role_codes(paths)] == [
        "source", "config", "source", "test", "source", "test", "source", "config", "source", "generated"]
    # dbt's tests by their kinds, its properties, an operator's runbook, asked for
    for asking, role in (("data test checking micropayments are not earlier than their taps", "test"),
                         ("custom generic test that checks the proportion of unique values", "test"),
                         ("where is estimated_cost_usd documented", "config"),
                         ("accepted values for the authorisation request_type column", "config"),
                         ("source freshness on the course run enrollment raw table", "config"),
                         ("dbt source definition for the GTFS RT external tables", "config"),
                         ("column descriptions for fct_dbt__test_executions", "config"),
                         ("seed mapping participant ids to organizations", "config"),
                         ("runbook for deprecating an obsolete warehouse table", "docs"),
                         ("alert that a volume is more than 80% full, what do I do", "docs")):
        assert roles_read_as_source(analyse(asking).terms, "description", asking) == [role], asking
    assert asked_tool_terms("superset dashboard for the suspicious behavior report") == ("superset", "dashboards")
    # what a review put through them: ordinary queries that name a seed, a source, tests or a playbook
    for passing in ("load the test data into the warehouse", "what does the scheduler do with a failed task",
                    "adr register of the audio driver", "set the random seed of the bootstrap",
                    "add a column to the users table", "parse the source of a template",
                    "should we retry on HTTP 429 responses", "ansible playbook that installs nginx",
                    "seed for numpy random state", "seed data for the development database",
                    "go to source definition of the handler", "freshness check for the cache entries",
                    "send a slack alert when a dbt test fails",
                    "skip flaky tests on windows", "table docs for the admin page",
                    "set the seed mapping of the generator"):
        assert roles_read_as_source(analyse(passing).terms, "description", passing) == [], passing
    assert file_role("docs/dags/overview.yaml") == "config" and file_role("dags/etl/config.yml") == "source"


def test_an_ml_projects_configs_that_build_objects_are_its_code(tmp_path):
    """Hydra's config groups (`_target_:`, `# @package`, a defaults list) and LightningCLI's recipes
    (`class_path:`) are programs written as settings: an ML engineer asks for them as for code, and as config a
    config both legs put first came 11th to 46th. Plain settings stay config; a tutorial's pages are docs."""
    root = tmp_path / "ws"
    files = {"configs/model/mnist.yaml": "_target_: src.models.mnist_module.MNISTLitModule\noptimizer:\n"
                                         "  _target_: torch.optim.Adam\n  lr: 0.001\n",
             "configs/debug/overfit.yaml": "# @package _global_\ntrainer:\n  overfit_batches: 3\n",
             "configs/trainer/ddp.yaml": "defaults:\n  - default\n\nstrategy: ddp\n",
             "configs/hydra/default.yaml": "defaults:\n  - override hydra_logging: colorlog\n",
             "config_hub/finetune/lora.yaml": "optimizer:\n  class_path: torch.optim.AdamW\n",
             "recipes/lora.yaml": "\ufeffmodel:\n  _component_: torchtune.models.lora_llama2_7b\n",
             "configs/train.yaml": "defaults:  # the groups\n  - _self_\n  - model: mnist\n",
             "configs/paths/default.yaml": "root_dir: .\nlog_dir: logs\n",
             ".github/workflows/ci.yml": "defaults:\n  run:\n    shell: bash\njobs: {}\n",
             "_config.yml": "defaults:\n  - scope:\n      path: ''\n    values:\n      layout: single\n",
             "outputs/2026-01-01/.hydra/config.yaml": "model:\n  _target_: src.Model\n",
             "src/train.py": "def train():\n    return 1\n"}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    chunker = FileChunker(IndexSettings())
    builds = np.array([any(c.kind == OBJECTS_KIND for c in chunker.chunk(path, text)) for path, text in files.items()])
    roles = dict(zip(files, (ROLES[code] for code in role_codes(list(files), builds_objects=builds)), strict=True))
    assert roles == {
        "configs/model/mnist.yaml": "source", "configs/debug/overfit.yaml": "source",
        "configs/trainer/ddp.yaml": "source", "configs/hydra/default.yaml": "source",
        "config_hub/finetune/lora.yaml": "source",
        "recipes/lora.yaml": "source", "configs/train.yaml": "source", "configs/paths/default.yaml": "config",
        ".github/workflows/ci.yml": "config", "_config.yml": "config",
        "outputs/2026-01-01/.hydra/config.yaml": "generated", "src/train.py": "source"}
    assert file_role("tutorials/oom.md") == "docs" and file_role("tutorials/developer-docs/adding-models.md") == "docs"
    assert file_role("tutorials/finetune.py") == "example" and file_role("tests/fixtures/tutorial/page.md") == "test"
    # the index reads the same: a hit on the model's config is source
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    result = workspace.find("MNISTLitModule optimizer Adam lr", legs=("bm25",))
    assert {hit.path: hit.role for hit in result.hits}["configs/model/mnist.yaml"] == "source"


def test_a_source_file_as_dense_as_minified_code_is_generated():
    """A committed minified bundle under a plain path (`public/js/app.js`) was `source`, and first for
    descriptions of the code it was built from: its density tells it, not its path."""
    paths = ["lib/utils.js", "public/js/app.js", "deep/" * 40 + "tiny.js", "docs/long-lines.md"]
    terms = np.array([900.0, 4000.0, 45.0, 5000.0])
    lines = np.array([250.0, 1.0, 1.0, 10.0])
    assert [ROLES[code] for code in role_codes(paths, terms, lines)] == ["source", "generated", "source", "docs"]


def test_a_minified_copy_is_shown_and_ranked_as_generated(tmp_path):
    root = tmp_path / "ws"
    (root / "lib").mkdir(parents=True)
    (root / "public" / "js").mkdir(parents=True)
    functions = [f"function retryUpload{n}(file, attempts) {{\n  let delay = 100;\n  for (let i = 0; i < attempts; i++) "
                 f"{{\n    if (send(file)) return true;\n    delay = delay * 2; // back off before the next try\n"
                 f"    sleep(delay + {n});\n  }}\n  return false;\n}}\n" for n in range(30)]
    (root / "lib" / "upload.js").write_text("\n".join(functions))
    (root / "public" / "js" / "app.js").write_text(" ".join(" ".join(f.split()) for f in functions) + "\n")
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    result = workspace.find("retry the upload with a delay that doubles", legs=("bm25",))
    roles = {hit.path: hit.role for hit in result.hits}
    assert roles == {"lib/upload.js": "source", "public/js/app.js": "generated"}
    workspace.indexer.embed_pending(workspace.embedder())
    ranked = workspace.find("retry the upload with a delay that doubles")  # the fitted ranker reads the role
    assert ranked.signals["ranking"].startswith("fitted") and ranked.hits[0].path == "lib/upload.js"


def test_analysis_names_entities_and_shape():
    frame = analyse('Traceback (most recent call last):\n  File "src/pkg/cookies.py", line 14, in extract_cookies\n'
                    "    jar.items.append(header)\nAttributeError: 'NoneType' object has no attribute 'items'\n"
                    + "the jar breaks when a response has no headers at all and then nothing else works " * 2)
    assert frame.shape == "long" and frame.frames == 1
    assert "src/pkg/cookies.py" in frame.paths and "cookies" in frame.modules
    assert {"extract_cookies", "attributeerror"} <= frame.names
    symbol = analyse("HTTPException")
    assert symbol.shape == "symbol" and "httpexception" in symbol.names
    # typed alone, a method with its class: the class is a scope, not a second name (a module-level
    # `def session()` defined "session" and ranked above `Session.request`)
    method = analyse("Session.request")
    assert method.shape == "symbol" and method.names == {"request"} and method.scopes == {"session"}
    # a hyphenated part is one scope (a Helm chart's `kube-prometheus-stack.fullname` was `stack.fullname`); a
    # minus before a dotted name is no part of it
    helper = analyse("kube-prometheus-stack.imagePullSecrets")
    assert helper.names == {"imagepullsecrets"} and helper.scopes == {"kube-prometheus-stack"}
    assert analyse("x = len(a)-self.offset").scopes == {"self"}
    # a C++ template's arguments are no part of its scope (`SkipList<Key,Comparator>::Insert` lost `Insert`)
    template = analyse("SkipList<Key, Comparator>::Insert")
    assert template.names == {"insert", "skiplist"} and template.modules == {"skiplist"}
    # a hyphenated bare name is a name whole too (an entitlement's `aps-environment`, a make target)
    assert {"aps-environment", "aps", "environment"} == analyse("aps-environment").names
    # a trace's frames: file, line and function, Python's and a JVM's
    traced = analyse('File "src/pkg/cookies.py", line 14, in extract\n\tat app.NiaAppKt.NiaApp(NiaApp.kt:227)\n'
                     "\tat app.Nav$1.invoke(Nav.kt:3)")
    assert traced.frame_lines == (("src/pkg/cookies.py", 14, "extract"), ("niaapp.kt", 227, "niaapp"),
                                  ("nav.kt", 3, "invoke"))
    dotted = analyse("why does Session.send drop the `max_redirects` setting")
    assert dotted.shape == "description"
    assert {"send", "max_redirects"} <= dotted.names and "session" in dotted.scopes
    # counted as BM25 cuts them: `parser_state` holds a third "parser"
    assert analyse("the Parser fails: parser.parse() returns None, the parser_state is lost").counts == {
        "parser": 3, "fails": 1, "parse": 1, "returns": 1, "none": 1, "parser_state": 1, "state": 1, "lost": 1}
    plain = analyse("where are cookies persisted between requests")
    assert plain.names == frozenset() and plain.paths == ()
    # a service's files beside its code are named by their kind's extension or their conventional name
    # ("docker-compose-dev.yml", "buf.gen.yaml" were words, and the query "probably not here")
    assert analyse("the postgres service of docker-compose-dev.yml").paths == ("docker-compose-dev.yml",)
    assert analyse("plugins in buf.gen.yaml and examplepb/stream.proto").paths == ("buf.gen.yaml", "examplepb/stream.proto")
    assert analyse("the migrate target of the Makefile").paths == ("makefile",)
    assert analyse("e.g. the makefile-like syntax").paths == ()
    assert analyse("where is the version set in the Makefile.").paths == ("makefile",)
    # a name that reads as a file too keeps its reading as code (`Response.json` the method)
    method_or_file = analyse("Response.json raises JSONDecodeError on an empty body")
    assert "json" in method_or_file.names and "response" in method_or_file.scopes


def test_analysis_reads_ipython_and_pytest_frames_absolute_paths_and_links():
    """A notebook user pastes IPython's frames, a pytest report its own, a reporter links a file on GitHub
    or quotes an installed copy's path: each names a file (and a frame its function and class) as a plain
    Python frame does."""
    notebook = analyse("TypeError: ufunc 'subtract' not supported\n"
                       "File ~/code/shop/src/pkg/cookies.py:14, in CookieJar.extract_cookies(self, response)\n"
                       "---> 14 jar.items.append(header)\n")
    assert notebook.frames == 1 and notebook.shape == "long"
    assert notebook.paths == ("code/shop/src/pkg/cookies.py",)
    assert "extract_cookies" in notebook.names and "cookiejar" in notebook.scopes | notebook.names
    linked = analyse("the bug is here https://github.com/acme/shop/blob/4f2a9c1/src/pkg/orders.py#L2 and in "
                     "/usr/lib/python3/site-packages/pkg/cookies.py, not in ./src/pkg/cookies.py")
    assert linked.paths == ("github.com/acme/shop/blob/4f2a9c1/src/pkg/orders.py",
                            "usr/lib/python3/site-packages/pkg/cookies.py", "src/pkg/cookies.py")
    assert {"orders", "cookies"} <= linked.modules
    report = analyse("    def test_jar():\n>       jar.extract_cookies(response)\n\n"
                     "src/pkg/cookies.py:14: in extract_cookies\n    jar.items.append(header)\n"
                     ".venv/lib/python3.12/site-packages/pluggy/_hooks.py:513: in __call__\nE   AttributeError\n")
    assert report.frames == 2 and "extract_cookies" in report.names
    assert report.paths == ("src/pkg/cookies.py", "venv/lib/python3.12/site-packages/pluggy/_hooks.py")
    windows = analyse("File c:\\Users\\me\\site-packages\\pkg\\cookies.py:14, in extract_cookies(response)")
    assert "c:/users/me/site-packages/pkg/cookies.py" in windows.paths and windows.frames == 1
    # a path never starts inside another one: from each slash of a long listing the search would scan the
    # rest of it again (quadratic: 13 s for a 40 KB listing)
    from noul_lsp.retrieval.analyse import _PATH
    assert _PATH.search("src/pkg/cookies.py", 3) is None and _PATH.search("x src/pkg/cookies.py", 1)


def test_a_word_written_in_one_piece_is_read_whole_where_the_code_writes_it_whole(tmp_path):
    """"GraphQL type for the Checkout object" read `graph` and `ql` too: rare words, but frequent in the few files
    that call graphql-core's `GraphQLObjectType`, and those came first in saleor, over `checkout/types.py`."""
    described = analyse("GraphQL type for the Checkout object")
    assert described.joined == (("graphql", ("graph", "ql")),)
    vocabulary = {"graphql": 0, "graph": 1, "ql": 2, "type": 3, "checkout": 4, "object": 5}
    assert list(described.lexical_counts(vocabulary)) == ["graphql", "type", "checkout", "object"]
    # a word the code never writes whole keeps its parts (`connection_pool` is read `connection`, `pool`)
    assert {"connection", "pool"} <= set(analyse("where is the ConnectionPool closed").lexical_counts(
        {"connection_pool": 0, "connection": 1, "pool": 2, "closed": 3}))
    # and so does a part the query writes on its own, and a bare name or an issue text (their parts are code's)
    assert "graph" in analyse("draw the graph of GraphQL types").lexical_counts(vocabulary)
    assert analyse("GraphQLObjectType").joined == ()
    root = tmp_path / "shop"
    (root / "graphql" / "checkout").mkdir(parents=True)
    (root / "graphql" / "checkout" / "types.py").write_text(
        "import graphene\n\nfrom ..core import graphql_type\n\n\n@graphql_type\n"
        "class Checkout(graphene.ObjectType):\n    \"\"\"A checkout: its lines, its total and its customer.\"\"\"\n\n"
        "    token = graphene.UUID()\n")
    (root / "graphql" / "printer.py").write_text(
        "from graphql import GraphQLObjectType, GraphQLField, GraphQLSchema, GraphQLList\n\n\n"
        "def print_type(graph_type: GraphQLObjectType) -> str:\n"
        "    fields = [f for f in graph_type.fields if isinstance(f, GraphQLField)]\n"
        "    return GraphQLSchema(GraphQLList(fields)).object_type\n")
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    try:
        rows = candidate_rows(workspace, "GraphQL type for the Checkout object")
    finally:
        workspace.close()
    assert rows["graphql/checkout/types.py"]["file_bm25"] == pytest.approx(1.0)
    assert rows["graphql/printer.py"]["file_bm25"] < 1.0


def test_a_defining_chunk_outranks_a_mentioning_one_in_its_features(cookie_workspace):
    rows = candidate_rows(cookie_workspace, "where is extract_cookies implemented")
    source, tests = rows["src/pkg/cookies.py"], rows["tests/test_cookies.py"]
    assert source["defines"] == 1.0 and tests["defines"] == 0.0
    assert tests["mentions"] == 1.0
    assert tests["role_test"] == 1.0 and source["role_test"] == 0.0
    assert tests["asks_test_is_test"] == 0.0
    named = candidate_rows(cookie_workspace, "extract_cookies in a fixture")  # tests named in passing
    assert named["tests/test_cookies.py"]["asks_test_is_test"] == 1.0
    # asked for outright, a test is read as source: no prior against it (the fitted weight for a query
    # naming tests is against them, and "tests for the bloom filter" put bloom_test.cc 22nd), and it keeps the
    # lift of asking (the code it tests came first: 37 of 71 walkthrough questions asking for tests outright had
    # the test first, 48 with the lift), as a page asked for outright does
    asked = candidate_rows(cookie_workspace, "the test that checks extract_cookies")
    assert asked["tests/test_cookies.py"]["role_test"] == 0.0 and asked["tests/test_cookies.py"]["asks_test_is_test"] == 1.0
    assert asked["src/pkg/cookies.py"]["asks_test_is_test"] == 0.0
    page = candidate_rows(cookie_workspace, "documentation of how cookies are persisted")
    assert page["docs/cookies.md"]["role_docs"] == 0.0 and page["docs/cookies.md"]["asks_docs_is_docs"] == 1.0


def test_a_traceback_frame_names_its_file(cookie_workspace):
    rows = candidate_rows(cookie_workspace, 'File "src/pkg/cookies.py", line 14, in extract_cookies')
    assert rows["src/pkg/cookies.py"]["path_named"] == 1.0
    assert rows["tests/test_cookies.py"]["path_named"] == 0.0
    assert rows["src/pkg/cookies.py"]["stem_named"] == 1.0


def test_a_copied_file_is_marked_as_a_copy(cookie_workspace):
    rows = candidate_rows(cookie_workspace, "cookie jar persist")
    copy = rows["third_party/copy/cookies.py"]
    assert copy["role_generated"] == 1.0 and copy["duplicate_share"] == 1.0
    assert rows["docs/cookies.md"]["role_docs"] == 1.0 and rows["docs/cookies.md"]["duplicate_share"] == 0.0


def test_a_bare_symbol_query_weighs_definitions_by_its_shape(cookie_workspace):
    rows = candidate_rows(cookie_workspace, "CookieJar")
    source = rows["src/pkg/cookies.py"]
    assert source["defines"] == 1.0 and source["symbol_x_defines"] == 1.0
    described = candidate_rows(cookie_workspace, "the jar that keeps cookies")
    assert described["src/pkg/cookies.py"]["symbol_x_defines"] == 0.0


def test_whole_file_bm25_and_path_terms_are_file_evidence(cookie_workspace):
    rows = candidate_rows(cookie_workspace, "cookies persisted between requests")
    assert rows["src/pkg/cookies.py"]["path_terms"] > 0
    assert max(r["file_bm25"] for r in rows.values()) == pytest.approx(1.0)
    assert rows["src/pkg/cookies.py"]["file_bm25_inverse_rank"] > 0


def test_a_helper_the_best_chunks_call_is_referenced(tmp_path):
    """An issue text names the function that fails; the fix is in the helper it calls, in another module."""
    root = tmp_path / "shop"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cookies.py").write_text(
        "from pkg._quoting import quote_cookie_value\n\n\ndef persist_cookies(jar, path):\n"
        '    """Write every cookie of the jar to disk."""\n    with open(path, "w") as handle:\n'
        "        for cookie in jar:\n            handle.write(quote_cookie_value(cookie))\n")
    (root / "pkg" / "_quoting.py").write_text(
        "def quote_cookie_value(value):\n    return '\"' + value.replace(';', '%3B') + '\"'\n\n\n"
        "def get(value):\n    return value\n")
    (root / "pkg" / "orders.py").write_text(
        'def place_order(cart):\n    """Orders are written to disk too, each value on its line."""\n    return cart\n')
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    issue = ("Persisted cookies lose their value\n\nWhen the jar is written to disk with persist_cookies, a value\n"
             "that holds a semicolon comes back cut in two.\n")
    try:
        rows = candidate_rows(workspace, issue)
        described = candidate_rows(workspace, "where are cookies persisted to disk")
    finally:
        workspace.close()
    helper, caller = rows["pkg/_quoting.py"], rows["pkg/cookies.py"]
    assert helper["referenced"] > 0 and helper["referencing_seeds"] > 0
    # the caller is no reference of itself, and a file whose definitions no best chunk uses gets nothing
    assert caller["referenced"] == 0.0
    assert rows["pkg/orders.py"]["file_bm25"] > 0 and rows["pkg/orders.py"]["referenced"] == 0.0
    # a one-line description's best chunks are its answer: the columns are for long queries only
    assert all(row["referenced"] == 0.0 and row["referencing_seeds"] == 0.0 for row in described.values())


def test_chunk_scores_from_the_two_parts_equal_the_full_rows_for_every_shape(cookie_workspace):
    arrays = cookie_workspace.loaded()
    rng = np.random.default_rng(3)
    model = RankModel(FEATURES, rng.normal(size=len(FEATURES)), rng.uniform(0.5, 2, len(FEATURES)),
                      rng.normal(size=len(FEATURES)), "", {})
    shapes = set()
    for query in ("extract_cookies", "where are cookies persisted between requests",
                  "Traceback:\n" + "  File \"src/pkg/cookies.py\", line 3, in extract_cookies\n" * 20):
        candidate = retrieve(cookie_workspace, analyse(query), arrays, legs=("bm25",), include=(), exclude=(),
                             query_vectors={}, stage=lambda name, started: None, notes=[])
        fused = fuse([candidate.bm25], [candidate.dense], size=200, rrf_k=60)
        built = root_features(analysis=analyse(query), table=arrays.symbols, row_file=arrays.row_file,
                              term_ids=arrays.vocabulary, idf=arrays.bm25.idf, lexical=candidate.lexical_all,
                              dense=None, fused_rows=fused.rows_of(0)[0], fused_scores=fused.rows_of(0)[1],
                              rrf_k=60, allowed=None, rows_containing=arrays.bm25.contains)
        assert len(built.rows) > 3
        shapes.add(built.shape)
        full = ((built.row_matrix - model.mean) / model.scale) @ model.coef
        assert np.allclose(built.row_scores(*model.linear(FEATURES)), full, rtol=1e-6, atol=1e-6)
        assert np.allclose(model.score(built.file_matrix, FEATURES),
                           ((built.file_matrix - model.mean) / model.scale) @ model.coef, rtol=1e-6, atol=1e-6)
    assert len(shapes) == 3  # a symbol, a description and a long text: each folds its own interactions


def test_the_fit_recovers_a_known_answer():
    rng = np.random.default_rng(7)
    features = ("signal", "noise", "anti")
    queries = []
    for query in range(60):
        matrix = rng.normal(size=(30, 3))
        gold = np.zeros(30, dtype=bool)
        best = int(np.argmax(matrix[:, 0] - matrix[:, 2] + 0.3 * rng.normal(size=30)))
        gold[best] = True
        queries.append(RankingQuery(f"repo{query % 3}", matrix, gold))
    model = fit_rank_model(queries[:45], features, embedder="e", l2=0.1)
    assert model.coef[0] > 1.0 and model.coef[2] < -1.0 and abs(model.coef[1]) < 0.5 * model.coef[0]
    top_one = [q.gold[int(np.argmax(model.score(q.matrix, features)))] for q in queries[45:]]
    assert np.mean(top_one) >= 0.8
    restored = RankModel.from_json(json.loads(json.dumps(model.to_json())))
    assert np.allclose(restored.score(queries[0].matrix, features), model.score(queries[0].matrix, features))
    with pytest.raises(ValueError, match="nothing to fit"):
        fit_rank_model([RankingQuery("r", np.zeros((3, 3)), np.zeros(3, dtype=bool))], features, embedder="e")


def test_without_a_fitted_file_the_engine_keeps_fusion_and_says_so(polyglot, tmp_path, monkeypatch):
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache"), "index": {"tokenBudget": 64}})
    workspace = Workspace(polyglot, settings)
    workspace.indexer.update()
    workspace.indexer.embed_pending(workspace.embedder())
    monkeypatch.setenv("NOUL_RANKING_DIR", str(tmp_path / "rankers"))
    result = workspace.find("retry failed uploads with exponential backoff")
    assert result.signals["ranking"] == "fusion"
    assert any("no fitted ranker" in note and "rank-fit" in note for note in result.notes)
    assert result.hits[0].path == "src/net/retry.py"
    # a folder that does not exist was passed over with no word (a team's ranker silently not used)
    assert any(f"$NOUL_RANKING_DIR {tmp_path / 'rankers'} is not a folder" in note for note in result.notes)
    (tmp_path / "rankers").mkdir()
    notes = workspace.find("retry failed uploads with exponential backoff").notes
    assert any("no fitted ranker" in note for note in notes) and not any("is not a folder" in n for n in notes)

    # a fitted file for this embedder is picked up (here: a model that only trusts the dense leg)
    weights = np.array([1.0 if name == "dense" else 0.0 for name in FEATURES])
    model = RankModel(FEATURES, np.zeros(len(FEATURES)), np.ones(len(FEATURES)), weights, workspace.model_key, {})
    (tmp_path / "rankers" / (workspace.model_key + ".json")).write_text(json.dumps(model.to_json()))
    fitted = Workspace(polyglot, settings)
    ranked = fitted.find("retry failed uploads with exponential backoff")
    assert ranked.signals["ranking"].startswith("fitted")
    assert ranked.hits[0].path == "src/net/retry.py"
    scores = [h.score for h in ranked.hits]
    assert scores == sorted(scores, reverse=True) and 0 < sum(scores) <= 1.0 + 1e-9
    chunks = fitted.find("retry failed uploads with exponential backoff", mode="chunks", limit=5).hits
    assert chunks[0].path == "src/net/retry.py"
    fitted.close()
    workspace.close()


def test_a_named_path_matches_at_folder_boundaries_only(cookie_workspace):
    table = cookie_workspace.loaded().symbols
    files = cookie_workspace.loaded().files

    def named(*paths):
        return sorted(files[i] for i in table.files_ending_with(paths))

    assert named("pkg/cookies.py") == ["src/pkg/cookies.py"]
    assert named("cookies.py") == ["src/pkg/cookies.py", "third_party/copy/cookies.py"]
    assert named("/home/me/venv/lib/site-packages/src/pkg/cookies.py") == ["src/pkg/cookies.py"]
    assert named("kg/cookies.py") == [] and named("orders.py") == ["src/pkg/orders.py"]
    # an installed copy (no src/ folder) shares the folder and the name: the longest such ending decides
    assert named("usr/lib/python3/site-packages/pkg/cookies.py") == ["src/pkg/cookies.py"]
    assert named("usr/lib/python3/site-packages/other/cookies.py") == []
    assert named("github.com/acme/shop/blob/4f2a9c1/src/pkg/orders.py") == ["src/pkg/orders.py"]


def test_top_k_over_a_sampled_threshold_is_the_top_k_of_every_score():
    """Over many scores top_k first keeps those above a threshold drawn from a sample; the best k (their
    scores, in order) are those a sort of every score gives, when most rows score, when few do (fewer than
    k above the sample's threshold), when most are 0 (the sample's zeros left out), with a floor of -inf or
    above 0, and with ties."""
    from noul_lsp.retrieval.fusion import SAMPLED_FROM, top_k

    rng = np.random.default_rng(11)
    size = SAMPLED_FROM * 3
    most = rng.random(size).astype(np.float32)
    few = np.zeros(size, dtype=np.float32)
    few[rng.choice(size, 150, replace=False)] = rng.random(150).astype(np.float32) + 1
    ties = np.round(rng.random(size) * 20).astype(np.float32)
    cosines = np.where(rng.random(size) < 0.5, rng.standard_normal(size), -np.inf).astype(np.float32)
    sparse = np.where(rng.random(size) < 0.15, rng.random(size) * 9, 0.0).astype(np.float32)  # a description's
    for scores, floor in ((most, 0.0), (few, 0.0), (ties, 0.0), (cosines, -np.inf), (sparse, 0.0), (sparse, 4.0)):
        found = top_k(scores, 200, floor=floor)
        expected = np.sort(scores[scores > floor])[::-1][:200]
        assert np.array_equal(scores[found], expected) and len(set(found.tolist())) == len(found)


def test_partition_and_counting_agree_with_sorting_every_score():
    """The ranking stage picks its best files by partition and counts ranks instead of sorting every
    file's score; ties must fall as a stable sort lets them."""
    from noul_lsp.retrieval.features import _best, _higher_than

    rng = np.random.default_rng(7)
    for _ in range(200):
        scores = rng.integers(0, 6, size=int(rng.integers(0, 400))).astype(np.float32)
        k = int(rng.integers(1, 40))
        positive = np.flatnonzero(scores > 0)
        assert np.array_equal(_best(scores, positive, k), positive[np.argsort(-scores[positive], kind="stable")[:k]])
        values = scores[scores > 0]
        thresholds = rng.choice(scores, size=min(len(scores), 15), replace=False) if len(scores) else scores
        descending = np.sort(values)[::-1]
        assert np.array_equal(_higher_than(values, thresholds), np.searchsorted(-descending, -thresholds, side="left"))
    for size in (9_000, 60_000):  # past the sampled threshold: the same files, ties by index
        scores = np.where(rng.random(size) < 0.7, rng.integers(1, 50, size), 0).astype(np.float32)
        positive = np.flatnonzero(scores > 0)
        for k in (1, 50, 400):
            assert np.array_equal(_best(scores, positive, k), positive[np.argsort(-scores[positive], kind="stable")[:k]])


def test_runs_give_the_maxima_runners_up_and_heads_a_sort_within_each_file_gives():
    """Per candidate file (a run of adjacent rows) the ranking stage takes the second-best chunk's value and
    the best few chunks from reduceat over the runs, not from a sort of every row by (file, value); ties
    must fall as that stable sort lets them (the earlier row first)."""
    from noul_lsp.retrieval.features import Blocks

    rng = np.random.default_rng(5)
    for _ in range(300):
        sizes = rng.integers(1, 9, size=int(rng.integers(1, 30)))
        owner = np.repeat(np.sort(rng.choice(1000, size=len(sizes), replace=False)), sizes)
        values = rng.integers(0, 4, size=len(owner)).astype(np.float32)  # few distinct values: many ties
        blocks = Blocks.of(owner)
        order = np.lexsort((-values, owner))
        ranked_owner = owner[order]
        place = np.arange(len(order)) - np.searchsorted(ranked_owner, ranked_owner)
        assert np.array_equal(owner[blocks.starts], np.unique(owner))
        assert np.array_equal(blocks.top(values, 3), order[place < 3])
        second = blocks.second_best(values)
        expected = values[order][place == 1]
        assert np.array_equal(second[blocks.sizes > 1], expected) and (second[blocks.sizes == 1] == -np.inf).all()


def _candidate_records(path, repos, queries_per_repo, rng, *, label_file):
    """Bench records whose gold file is the one with the highest `rrf` feature (plus noise), the rest random."""
    from noul_lsp.retrieval.features import FEATURES

    signal = FEATURES.index("rrf")
    lines = []
    for repo in repos:
        for number in range(queries_per_repo):
            matrix = rng.normal(size=(12, len(FEATURES)))
            gold = int(np.argmax(matrix[:, signal] + 0.5 * rng.normal(size=12)))
            files = [f"f{i}.py" for i in range(12)]
            lines.append(json.dumps({
                "id": f"{repo}-{number}", "label_file": label_file, "repo": repo, "pipeline": "hybrid",
                "kind": "answerable", "gold_files": [files[gold]], "pair": "e@128+none",
                "ranked": [[f, 0.0] for f in files],
                "rank_candidates": {"features": list(FEATURES), "files": files, "matrix": matrix.tolist()}}))
    path.write_text("\n".join(lines) + "\n")


def test_rank_fit_trains_on_extra_records_but_scores_only_its_own(tmp_path):
    from noul_lsp.bench.rank_fit import rank_fit

    rng = np.random.default_rng(11)
    dev, extra = tmp_path / "dev.jsonl", tmp_path / "extra.jsonl"
    _candidate_records(dev, ("a/one", "b/two", "c/three"), 4, rng, label_file="dev")  # too few to learn from
    _candidate_records(extra, ("x/commits", "y/commits"), 150, rng, label_file="commit-train")
    _, alone = rank_fit([dev], out_dir=tmp_path / "alone", ablation=False)
    written, helped = rank_fit([dev], out_dir=tmp_path / "helped", ablation=False, extra_paths=[extra])
    assert set(helped["held_out"]) == {"dev", "all"}  # no figure on the extra records
    assert helped["held_out"]["all"]["acc@1"] > alone["held_out"]["all"]["acc@1"]
    provenance = json.loads(written.read_text())["provenance"]
    assert provenance["extra_queries"] == 300 and provenance["extra_repositories"] == 2
    assert provenance["extra_weight"] == 1.0
    # extra records of the fitted repositories themselves (their commits) train every fold but their own
    own = tmp_path / "own.jsonl"
    _candidate_records(own, ("a/one", "b/two", "c/three"), 100, rng, label_file="commit-train")
    _, beside = rank_fit([dev], out_dir=tmp_path / "beside", ablation=False, extra_paths=[own])
    assert beside["held_out"]["all"]["acc@1"] > alone["held_out"]["all"]["acc@1"]
    items, _ = load_candidates([dev])
    others, _ = load_candidates([extra])
    for weight in (0.5, 2.0):  # the extra queries together weigh `weight` times the fitted ones
        queries = _training(items, others, list(range(len(items[0].matrix[0]))), weight)
        assert sum(q.weight for q in queries[len(items):]) == pytest.approx(weight * len(items))
        assert all(q.weight == 1.0 for q in queries[: len(items)])


def test_symbol_matches_agree_whichever_list_is_longer():
    """The entity columns search the shorter of (candidates, a name's postings) in the longer; either way
    a candidate is marked exactly when a posting holds it, and its share sums the idf of those terms."""
    from noul_lsp.retrieval.bm25 import members
    from noul_lsp.retrieval.features import WeightedTerms, _weighted_share
    from noul_lsp.retrieval.vocabulary import PackedMap

    rng = np.random.default_rng(11)
    for _ in range(100):
        candidates = np.unique(rng.integers(0, 5000, size=int(rng.integers(0, 300)))).astype(np.int32)
        postings = {term: np.unique(rng.integers(0, 5000, size=int(rng.integers(0, 3000)))).astype(np.int32)
                    for term in ("a", "b", "c")}
        idf = {"a": 1.0, "b": 2.5, "c": 0.0}
        assert np.array_equal(members(postings["a"], candidates), np.isin(candidates, postings["a"]))
        expected = sum(idf[t] * np.isin(candidates, postings[t]) for t in postings) / sum(idf.values())
        query = WeightedTerms.of(["a", "b", "c"], np.array([idf[t] for t in ("a", "b", "c")]))  # "d": unknown
        assert np.allclose(_weighted_share(candidates, postings, query), expected)
        assert np.array_equal(_weighted_share(candidates, PackedMap.of(postings), query),
                              _weighted_share(candidates, postings, query))


def test_a_later_window_of_a_long_definition_previews_its_signature_first():
    """Its text starts mid-body: the header every window carries names the definition and the part."""
    from noul_lsp.retrieval.aggregate import record_preview
    from noul_lsp.store import ChunkRecord

    header = "class Session\ndef request(self, method, url) (part 2 of 3)"
    later = ChunkRecord("k", "a.py", 40, 60, "Session.request", "python", "method", header,
                        "        :param allow_redirects: follow them\n        return send()", "h")
    assert record_preview(later) == "def request(self, method, url) (part 2 of 3)\n:param allow_redirects: follow them"
    first = ChunkRecord("k", "a.py", 1, 20, "Session.request", "python", "method", header.replace("2 of", "1 of"),
                        "    def request(self, method, url):\n        \"\"\"Send it.\"\"\"", "h")
    assert record_preview(first) == "def request(self, method, url):\nSend it."
    # a signature too long for the line keeps its part (two windows read as one hit twice without it)
    long_header = "def request(" + ", ".join(f"argument_{n}=None" for n in range(20)) + ") (part 3 of 4)"
    shown = record_preview(ChunkRecord("k", "a.py", 80, 99, "request", "python", "function", long_header, "x = 1", "h"))
    assert shown.split("\n")[0].endswith("… (part 3 of 4)") and len(shown.split("\n")[0]) <= 160
    # a Markdown page's front matter is no preview: its title is the chunk's symbol already
    page = ChunkRecord("k", "docs/focus.md", 1, 9, "Window Focus Refetching", "markdown", "text", "Window Focus Refetching",
                       "---\nid: window-focus-refetching\ntitle: Window Focus Refetching\n---\n\nIf a user leaves", "h")
    assert record_preview(page) == "If a user leaves"


def test_a_dotfiles_repositorys_files_are_read_as_what_they_are():
    """thoughtbot/dotfiles' `zshrc`, `aliases` and zsh functions were windows of `other`, its `history.zsh` a
    changelog, its git hooks `other` beside `bin/`'s scripts, its `gitconfig` one window named nothing, and 8 of
    its 15 scripts previewed `#!/bin/sh` / `set -e`."""
    from noul_lsp.retrieval.result import preview

    shell_and_vim = ("zshrc", ".bashrc", "aliases", "zsh/functions/mcd", "zsh/configs/history.zsh", "vimrc.bundles",
                     "hooks/post-up", "git_template/hooks/post-checkout")
    assert [file_role(p) for p in shell_and_vim] == ["source"] * 8
    assert [file_role(p) for p in ("gitconfig", "psqlrc", "rcrc", ".eslintrc")] == ["config"] * 4
    assert file_role("bin/src") == "source" and file_role("HISTORY.md") == "changelog"
    chunker = FileChunker(IndexSettings())
    shell = "mcd() {\n  mkdir -p \"$1\" && cd \"$1\"\n}\nalias ll='ls -al'\n"
    assert [(c.symbol, c.language) for c in chunker.chunk("zsh/functions/mcd", shell) if c.symbol] == [("mcd", "bash")]
    assert {c.language for c in chunker.chunk("zshrc", shell)} == {"bash"}
    assert "ll" in chunker.chunk("aliases", "# Unix\nalias ll='ls -al'\nalias -g G='| grep'\n")[0].names
    gitconfig = ('[init]\n  defaultBranch = main\n[alias]\n  fp = push --force-with-lease\n'
                 '[remote "origin"]\n  url = x\n')
    assert chunker.chunk("gitconfig", gitconfig)[0].names == (
        "init", "init.defaultBranch", "alias", "alias.fp", "remote.origin", "remote.origin.url")
    assert preview("#!/bin/sh\n\nset -euo pipefail\n\n# Delete a merged branch\ngit branch -d \"$1\"") == \
        "# Delete a merged branch\ngit branch -d \"$1\""


def test_a_unity_projects_assets_are_named_and_its_settings_and_imports_read_as_such():
    """Two Unity projects' scenes and prefabs were windows named nothing, previewed `%YAML 1.1` / `%TAG !u! ...`;
    `ProjectVersion.txt` was docs, `InputManager.asset` other, TextMesh Pro's shaders the project's source, and a
    `.meta` beside every asset a quarter of the index."""
    from noul_lsp.config import DEFAULT_EXCLUDES
    from noul_lsp.retrieval.result import preview
    from noul_lsp.retrieval.symbols import declaration_twins

    prefab = ("%YAML 1.1\n%TAG !u! tag:unity3d.com,2011:\n--- !u!1 &1000010562469388\nGameObject:\n"
              "  m_ObjectHideFlags: 0\n  m_PrefabInternal: {fileID: 100100000}\n  serializedVersion: 4\n"
              "  m_Layer: 5\n  m_Name: ResourceItem\n--- !u!114 &114000011141895080\nMonoBehaviour:\n  m_Name: \n")
    chunk = FileChunker(IndexSettings()).chunk("Assets/Prefabs/ResourceItem.prefab", prefab)[0]
    assert (chunk.symbol, chunk.names) == ("ResourceItem", ("ResourceItem",))
    assert preview(chunk.text) == "GameObject:\nm_Layer: 5"
    assert [file_role(p) for p in ("ProjectSettings/ProjectVersion.txt", "ProjectSettings/InputManager.asset",
                                   "Assets/Input.inputactions")] == ["config"] * 3
    assert file_role("Assets/TextMesh Pro/Shaders/TMP_SDF.shader") == "generated"
    assert file_role("lua/lazyvim/plugins/ui.lua") == "source"  # a plugins folder elsewhere is the project's
    assert file_role("Assets/Resources/FloorGeneration/grammarList.txt") == "other"
    assert "*.meta" in DEFAULT_EXCLUDES
    # a custom inspector stands beside the component it edits, as a header beside its implementation
    paths = ["Assets/Scripts/Patrol.cs", "Assets/Scripts/Editor/PatrolInspector.cs", "Assets/Editor/BuildTool.cs",
             "src/editor/TextEditor.cs", "src/Text.cs"]
    assert declaration_twins(paths).tolist() == [False, True, False, False, False]


def test_a_preview_keeps_a_signature_written_after_an_annotation_and_skips_php_directives():
    """kotlinpoet's `@JvmStatic public fun classBuilder(...)` previewed as nothing (38 empty previews), and every
    flysystem import chunk as `<?php / declare(strict_types=1);`."""
    from noul_lsp.retrieval.result import preview

    # a Go template's ends and comment fences, a YAML document's `---`, say nothing (helm-charts' `{{- end }}`)
    assert preview("{{- end }}\n{{- end -}}\n{{/*\nThe service account's name\n*/}}\n{{- define \"x.sa\" -}}") \
        == 'The service account\'s name\n{{- define "x.sa" -}}'
    assert preview("---\napiVersion: v1\nkind: Service") == "apiVersion: v1\nkind: Service"
    assert preview("  @JvmStatic public fun classBuilder(name: String): Builder = Builder(name)") \
        == "@JvmStatic public fun classBuilder(name: String): Builder = Builder(name)".split(" ", 1)[1]
    assert preview('@Deprecated("use x")\n@objc public func clearMemoryCache() {\n  memory.removeAll()\n}') \
        == "public func clearMemoryCache() {\nmemory.removeAll()"
    assert preview("@pytest.fixture(\n    scope='module',\n)\ndef client():\n    return Client()") \
        == "def client():\nreturn Client()"
    assert preview("<?php\n\ndeclare(strict_types=1);\n\nnamespace League\\Flysystem;\n\nuse Throwable;") \
        == "namespace League\\Flysystem;\nuse Throwable;"
    # a C header's guard and linkage say nothing (FreeRTOS' headers previewed as `#ifndef __SECURE_INIT_H__`)
    assert preview("#ifndef SECURE_INIT_H\n#define SECURE_INIT_H\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
                   "void SecureInit_DePrioritizeNSExceptions( void );") == "void SecureInit_DePrioritizeNSExceptions( void );"
    assert preview("#define configUSE_PREEMPTION 1") == "#define configUSE_PREEMPTION 1"
    # a shader's preamble says nothing: every Godot sprite shader previewed as `shader_type canvas_item;`
    assert preview("shader_type canvas_item;\nrender_mode blend_mix, unshaded;\n\nuniform float progress : "
                   "hint_range(0.0, 1.0);\nvoid fragment() {") == \
        "uniform float progress : hint_range(0.0, 1.0);\nvoid fragment() {"
    assert preview("#version 330 core\nprecision mediump float;\nuniform float scanlines;") \
        == "uniform float scanlines;"
    # a call whose last argument opens a block is no signature going on below (jQuery's document-ready)
    assert preview("$(function () {\n  var form = $('#add-check');\n  form.submit(check);\n") \
        == "$(function () {\nvar form = $('#add-check');"


def test_a_code_preview_reads_the_doc_comment_above_a_signature_after_it():
    """168 of 400 rows of a Go walkthrough showed two lines of godoc and no `func` line; a comment line with an
    open parenthesis was joined to the next, its `//` kept. Only the block touching the signature is its doc,
    a tool's directive or a rule is none, a language's own comment marks only (C's `# define` is code), and a
    Python docstring stays the summary."""
    from noul_lsp.retrieval.result import preview

    godoc = ("// leastRequests returns the host with the\n// least number of active requests (to it).\n"
             "func leastRequests(upstreams []*Upstream) *Upstream {\n\tif len(upstreams) == 0 {")
    assert preview(godoc, language="go") == ("func leastRequests(upstreams []*Upstream) *Upstream {\n"
                                             "leastRequests returns the host with the")
    javadoc = "/**\n * Returns the thumbnail.\n * @param w width\n */\npublic Image thumb(\n    int w) {\n  return x;"
    assert preview(javadoc, language="java") == "public Image thumb(int w) {\nReturns the thumbnail."
    rust = "/// Parses the args.\n#[derive(Debug)]\npub fn parse(args: &[String]) -> Result<()> {\n    todo!()"
    assert preview(rust, language="rust") == "pub fn parse(args: &[String]) -> Result<()> {\nParses the args."
    haddock = "{-# INLINE int16Host #-}\n-- | Encode an 'Int16'.\nint16Host :: Int16 -> Builder\nint16Host = x"
    assert preview(haddock, language="haskell") == "int16Host :: Int16 -> Builder\nEncode an 'Int16'."
    # a licence or a directive a blank line away, a rule, a directive touching it: the code's own preview
    licensed = "// Copyright 2015 The Authors\n\n// Serve serves.\nfunc Serve() {}"
    assert preview(licensed, language="go") == "func Serve() {}\nServe serves."
    assert preview("//go:build !windows\n\npackage caddy\n\nimport \"os\"", language="go") == 'package caddy\nimport "os"'
    assert preview("/* eslint-disable no-console */\nexport default (o) => {\n  run(o)", language="javascript") \
        == "export default (o) => {\nrun(o)"
    assert preview("/*----------*/\n/* do an itoa */\nvoid put(int n)\n{", language="c") == "void put(int n)\ndo an itoa"
    # C's preprocessor is code; a dereference opening a window is no comment's line
    assert preview("# define YYCOPY(Dst) \\\n  do { memcpy(Dst); } while (0)", language="c").startswith("# define YYCOPY")
    assert preview("*out = value;\nreturn 0;", language="c") == "*out = value;\nreturn 0;"
    # Python: the docstring is the summary when there is one, the comment above when there is none
    documented = "# From werkzeug.\ndef parse(value):\n    \"\"\"Parse lists as in RFC 2068.\"\"\"\n    return 1"
    assert preview(documented, language="python") == "def parse(value):\nParse lists as in RFC 2068."
    assert preview("# Compute the checksum.\ndef checksum(data):\n    return 1", language="python") \
        == "def checksum(data):\nCompute the checksum."
    # comments alone, and text, are read as they are
    assert preview("// only a comment\n// and more", language="go") == "// only a comment\n// and more"
    assert preview("# Title\n\nSome words.") == "# Title\nSome words."
    # a signature of many lines is read to its end, however long, and the body's first line follows it
    long = ("fn run_dependencies<'run>(\n" + "".join(f"    parameter_{n}: &Context<'src, 'run>,\n" for n in range(9))
            + ") -> RunResult<'src, ()> {\n    if context.config.no_dependencies {\n        return Ok(());")
    assert preview(long, language="rust").split("\n")[1] == "if context.config.no_dependencies {"


def test_the_symbol_table_reads_one_line_per_definition_and_names_without_rubys_marks():
    """A name the grammar spreads over lines is one definition, not one per line; `save!` is typed `save`."""
    from noul_lsp.retrieval.segment import symbol_lines
    from noul_lsp.retrieval.symbols import build_symbol_table
    from noul_lsp.store import ChunkRecord

    records = [ChunkRecord("a", "a.rs", 1, 4, "impl<T> Display\n for Wrapper<\n T,\n >", "rust", "impl", "", "x", "h"),
               ChunkRecord("b", "b.rb", 1, 9, "Store", "ruby", "class", "", "y", "h2", ("Store.save!", "Store.valid?"))]
    table = build_symbol_table(symbols=[symbol_lines(r) for r in records], files=["a.rs", "b.rb"],
                               row_file=np.array([0, 1], dtype=np.int32), codes=np.array([1, 2], dtype=np.uint64),
                               file_bm25=None)
    assert ">" not in table.definitions and "t," not in table.definitions
    assert table.rows_defining(["save"]).tolist() == [1] and table.rows_defining(["valid?"]).tolist() == [1]


def test_rank_fit_of_one_repository_fits_and_says_it_holds_nothing_out(tmp_path):
    """A team labels its one repository (`noul train labels --repo .`): there is no other repository to fit a
    fold on; the fit on everything is written, and the figures say there is no held-out one (it failed
    with "nothing to fit", which was not so)."""
    from noul_lsp.bench.rank_fit import format_metrics, rank_fit

    rng = np.random.default_rng(3)
    ours = tmp_path / "ours.jsonl"
    _candidate_records(ours, ("acme/api",), 60, rng, label_file="commit-labels")
    written, metrics = rank_fit([ours], out_dir=tmp_path / "ranking")
    assert written.is_file() and metrics["held_out"] is None and "ablation" not in metrics
    assert metrics["in_sample"]["all"]["acc@1"] > metrics["baseline"]["all"]["acc@1"]
    table = format_metrics(metrics)
    assert "leave-one-repository-out" not in table and "Not held out: one repository (acme/api)" in table


def test_a_file_whose_head_says_a_tool_wrote_it_is_generated(tmp_path):
    """Go's `// Code generated ... DO NOT EDIT.` (mockgen, stringer, controller-gen) under a plain name was
    `source`, and `zz_generated`-like copies of the real code ranked beside it."""
    from noul_lsp.chunking import generated_by_a_tool

    root = tmp_path / "ws"
    (root / "mocks").mkdir(parents=True)
    body = ("func ValidateRequiredFlags(c *Command) error {\n\tfor _, flag := range c.required {\n"
            "\t\tif !flag.Changed {\n\t\t\treturn fmt.Errorf(\"required flag %s not set\", flag.Name)\n"
            "\t\t}\n\t}\n\treturn nil\n}\n")
    (root / "flags.go").write_text("package cobra\n\n" + body)
    (root / "mocks" / "command.go").write_text("// Code generated by MockGen. DO NOT EDIT.\n// Source: flags.go\n\n"
                                               "package mocks\n\n" + body.replace("Validate", "MockValidate"))
    writer = "package gen\n\nfunc header() string {\n\treturn \"// Code generated by gen. DO NOT EDIT.\"\n}\n"
    (root / "writer.go").write_text(writer)
    assert not generated_by_a_tool(writer)  # a generator writing the words in a string is code people write
    # Bison's parser and flex's scanner (jq's parser.c and lexer.c, a quarter of its C) say so in their heads
    assert generated_by_a_tool("/* A Bison parser, made by GNU Bison 3.8.2.  */\n\n/* Bison implementation */\n")
    assert generated_by_a_tool('#line 2 "src/lexer.c"\n\n#line 4 "src/lexer.c"\n\n#define YY_INT_ALIGNED short int\n')
    # a bundler's or compiler's prelude: healthchecks' committed esbuild bundle was source and a first hit
    assert generated_by_a_tool('"use strict";\n(() => {\n  var __defProp = Object.defineProperty;\n  var __export = 1;\n')
    assert generated_by_a_tool("/******/ (() => { // webpackBootstrap\n/******/ \tvar __webpack_modules__ = ({\n")
    assert generated_by_a_tool('"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\n')
    assert not generated_by_a_tool('const api = {};\nObject.defineProperty(api, "version", { value: "1.0" });\n')
    chunks = FileChunker(IndexSettings()).chunk("mocks/command.go", (root / "mocks" / "command.go").read_text())
    assert chunks and {chunk.kind for chunk in chunks} == {"generated"}
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    result = workspace.find("fail when a required flag was not set", legs=("bm25",))
    assert {hit.path: hit.role for hit in result.hits} == {"flags.go": "source", "mocks/command.go": "generated"}
    assert workspace.find("header string", legs=("bm25",)).hits[0].role == "source"  # writer.go


def test_a_bare_name_opens_its_definition_at_its_first_part(tmp_path):
    """A definition too long for one chunk is cut into parts; its name asked alone opened at whichever part
    named it most (TanStack's `HydrationBoundary` at its lines 67-111, the definition starting at 25)."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    head = "export const HydrationBoundary = ({ children, options }: HydrationBoundaryProps) => {\n"
    filler = "".join(f"  const queue{i} = hydrateQueue(options, {i})\n" for i in range(60))
    later = "".join(f"  // HydrationBoundary hydrates pending queries {i}: HydrationBoundary\n" for i in range(20))
    (root / "src" / "HydrationBoundary.tsx").write_text(head + filler + later + "  return children\n}\n")
    (root / "src" / "other.ts").write_text("export function unrelated() {\n  return 1\n}\n")
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    chunks = sorted(c.start_line for c in workspace.store.chunks() if c.symbol == "HydrationBoundary")
    assert len(chunks) > 1  # cut into parts, the later ones naming it more
    hit = workspace.find("HydrationBoundary", legs=("bm25",)).hits[0]
    assert hit.path == "src/HydrationBoundary.tsx" and hit.start_line == 1
    assert hit.bm25_rank == 1  # its evidence stays the scoring part's: P(answer) and the bench's records read it
    described = workspace.find("hydrate pending queries", legs=("bm25",)).hits[0]  # a description: the best part
    assert described.start_line > 1


def test_a_bare_name_defined_inside_a_long_definitions_window_opens_at_that_window(tmp_path):
    """A Zig generic type is one function cut into windows; a function defined in it and asked for by name
    opened at a window that calls it most (tigerbeetle's `replicate`, defined at line 8525, at 2016-2045)."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    callers = "".join(f"        pub fn caller_{i}(self: *Self) void {{\n            self.replicate(message);\n"
                      f"            self.replicate(message);\n        }}\n\n" for i in range(40))
    others = "".join(f"        pub fn other_{i}(self: *Self) void {{\n            self.count += {i};\n        }}\n\n"
                     for i in range(60))
    definition = ("        fn replicate(self: *Self, message: *Message) void {\n            self.send(message);\n"
                  "        }\n")
    # and one whose defining window is the best chunk: it opened at the generic type's first part, a window above
    committing = ("        fn commit_prepare(self: *Self) void {\n"
                  + "            self.commit_prepare_next(); // commit_prepare again\n" * 8 + "        }\n")
    (root / "src" / "replica.zig").write_text(
        "pub fn ReplicaType(comptime T: type) type {\n    return struct {\n        const Self = @This();\n\n"
        + callers + others.replace("self.count += ", "self.commit_prepare(); // ") + definition + committing
        + "    };\n}\n")
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    defined_at = 4 + callers.count("\n") + others.count("\n") + 1
    hit = workspace.find("replicate", legs=("bm25",)).hits[0]
    assert hit.path == "src/replica.zig" and hit.start_line <= defined_at <= hit.end_line
    committed_at = defined_at + definition.count("\n")
    hit = workspace.find("commit_prepare", legs=("bm25",)).hits[0]
    assert hit.start_line <= committed_at <= hit.end_line


def test_styles_translations_and_hosting_settings_asked_for_are_read_as_source(tmp_path):
    """A frontend developer's stylesheets are `other` and an app's translations and hosting settings config: the
    ranker's priors buried `vars.css` 104th, `en.json` 96th and `netlify.toml` 28th, each first in a leg. Asked
    for outright (styles, css; an interface's words in a language; a host's or a bundler's settings), their
    files are read as source; in passing, or in other words, they are not."""
    from noul_lsp.retrieval.roles import asked_tool_terms, asks_for_styles

    for asking in ("where are the dark theme color css variables defined", "styles of the share dialog",
                   "scss color variables and mixins", "global scrollbar styles", "style rules for the navbar"):
        assert asks_for_styles(asking), asking
    for passing in ("follow the code style of the project", "the style guide", "styled components theme",
                    "use less memory", "python coding style checker"):
        assert not asks_for_styles(passing), passing
    assert "i18n" in asked_tool_terms("English text of the sign in button")
    assert "locales" in asked_tool_terms("English wording of the error shown when the server is down")
    assert "netlify" in asked_tool_terms("netlify build command and redirects")
    assert "vite" in asked_tool_terms("vite build config with the PWA manifest")
    assert not asked_tool_terms("store the scene of a collaboration room in Firebase")
    # a browser's test runner named asks for its tests ("cypress end-to-end test for logging in" put it 134th)
    from noul_lsp.retrieval.roles import asks_for_tests
    for asking in ("cypress end-to-end test for logging in", "Playwright e2e test that signs up a user",
                   "selenium test of the checkout page", "API tests that upload oversized files",
                   "login page tests for a locked account"):
        assert asks_for_tests([], "description", asking), asking
    assert not asks_for_tests([], "description", "the playwright config")
    for passing in ("fixtures and tests that share a temporary directory", "OpenAPI specs for the user endpoints",
                    "run tests for the frontend", "number of tests that failed", "pytest collects tests that match a "
                    "pattern", "skip tests for windows", "flaky tests that time out"):
        assert not asks_for_tests([], "description", passing), passing
    # a documentation page or a changelog's entry asked for outright is read as source (typer's and mkdocs' pages
    # came under the code they document); an app's page is no documentation page
    from noul_lsp.retrieval.roles import roles_read_as_source
    for asking in ("which tutorial page explains adding a --version flag", "page about asking for a password",
                   "docs section on keeping files out of the site", "reference page for the Typer class",
                   "where do the docs show how to open a URL", "guide page for making a class renderable",
                   "FAQ entry about text in square brackets"):
        assert roles_read_as_source([], "description", asking) == ["docs"], asking
    for asking in ("release notes entry about vendoring Click", "changelog for the breaking change to metavar",
                   "changelog note about new table styles"):
        assert roles_read_as_source([], "description", asking) == ["changelog"], asking
    for passing in ("where is the page that shows a single post", "page for a hashtag's timeline",
                    "page listing the accounts a user follows", "render the docs page title in the header"):
        assert roles_read_as_source([], "description", passing) == [], passing
    root = tmp_path / "ws"
    (root / "app" / "styles").mkdir(parents=True)
    (root / "app" / "components").mkdir(parents=True)
    (root / "app" / "styles" / "vars.css").write_text(
        ":root {\n  --c-primary: #f60;\n  --c-bg: #fff;\n}\n\n.dark {\n  --c-primary: #fa0;\n  --c-bg: #111;\n}\n")
    (root / "app" / "components" / "ColorMode.ts").write_text(
        "// switches the dark theme on and off\nexport function toggleDark(root: HTMLElement) {\n"
        "  root.classList.toggle('dark')\n}\n")
    workspace = _embedded_workspace(root, tmp_path)
    def stylesheet_share(query):
        return next(h.score for h in workspace.find(query).hits if h.path == "app/styles/vars.css")
    hits = workspace.find("css variables of the dark theme").hits
    assert hits[0].path == "app/styles/vars.css" and hits[0].role == "other"  # read as source, shown as it is
    assert stylesheet_share("css variables of the dark theme") > 10 * stylesheet_share("variables of the dark theme")


def test_a_template_asked_for_is_read_as_source(tmp_path):
    """A Django app's templates are `other`; "the template of the check details page" found only its view
    code. Asked for outright, the templates folder's files are read as source (not in passing: "webhook
    templates" are strings in code)."""
    from noul_lsp.retrieval.roles import asks_for_templates

    assert asks_for_templates("the template of the project's settings page")
    assert asks_for_templates("the check details template") and not asks_for_templates("templates")
    assert not asks_for_templates("replace $NAME placeholders in webhook templates")
    # a page, a view or a partial asked for by what it shows, a template engine named, an email's text
    for asking in ("user profile page showing karma", "HTML partial for a single comment",
                   "page that shows the QR code for enrolling", "Thymeleaf page listing veterinarians",
                   "partial that renders a product tile", "the Razor view of the basket",
                   "text of the password reset email"):
        assert asks_for_templates(asking), asking
    for passing in ("scrape a web page with BeautifulSoup", "fetch the next page of an infinite query",
                    "paginate the results", "fetch next page of results", "Django view for user registration",
                    "materialized views for reporting", "layout of the struct in memory"):
        assert not asks_for_templates(passing), passing
    root = tmp_path / "ws"
    (root / "templates" / "front").mkdir(parents=True)
    (root / "hc" / "front").mkdir(parents=True)
    (root / "templates" / "front" / "details.html").write_text(
        '{% extends "base.html" %}\n{% block content %}\n<h1>Check details</h1>\n<div class="details">\n'
        "  {{ check.name }} last ping {{ check.last_ping }}\n</div>\n{% endblock %}\n")
    (root / "hc" / "front" / "views.py").write_text(
        "def details(request, code):\n    \"\"\"Show one check.\"\"\"\n    check = get_check(code)\n"
        "    return render(request, 'front/details.html', {'check': check, 'page': 'details'})\n\n\n"
        "def log(request, code):\n    return render(request, 'front/log.html', {})\n")
    workspace = _embedded_workspace(root, tmp_path)
    def template_share(query):
        found = workspace.find(query)
        assert found.signals["ranking"].startswith("fitted")
        return next(h.score for h in found.hits if h.path == "templates/front/details.html" and h.role == "other")
    # asked for, the template has a source file's prior (a fifth of the candidates' probability against a
    # thousandth when not asked: the `other` role's weight is about -5)
    assert template_share("the template of the check details page") > 50 * template_share(
        "where is the check details page rendered")


def test_a_head_of_imports_and_the_line_that_assigns_a_name_are_read_as_such():
    """Where a hit moves: past a file's head of imports (in the languages' own forms, a module docstring
    first), never past code; to the line that assigns the name asked, not a keyword argument, a comparison,
    a condition or a comment that mentions it."""
    from noul_lsp.retrieval.aggregate import _assignment, _imports_only

    heads = [("go", 'package lex\n\nimport (\n\t"testing"\n\tstr "strings"\n)\n'),
             ("python", '"""Tests util.inspect.\n\nMore.\n"""\n\nfrom __future__ import annotations\nfrom a import (\n'
                        '    b,\n    c as d,\n)\n'),
             ("javascript", "'use strict';\n\nconst { a } = require('b');"),
             ("ruby", "# frozen_string_literal: true\nrequire 'json'\nrequire_relative 'x'"),
             ("php", "<?php\n\nnamespace App;\n\nuse Foo\\Bar;"), ("c", '/*\n Copyright\n*/\n#include <stdio.h>\n// io'),
             ("rust", "use std::io;\nuse crate::{\n    a,\n};"), ("typescript", "import {\n  x,\n} from 'z';\nimport type { T } from './t'"),
             # Haskell's Haddock, pragmas, exports and imports (PostgREST's `RangeQuery.hs:1-32` above `rangeParse`)
             ("haskell", "{-|\nModule      : PostgREST.RangeQuery\n-}\n{-# LANGUAGE OverloadedStrings #-}\n"
                         "module PostgREST.RangeQuery (\n  rangeParse\n, NonnegRange\n) where\n\nimport Protolude")]
    assert all(_imports_only(head, language) for language, head in heads)
    code = [("python", "import os\n\nmain()"), ("bash", 'echo "hello"\nexit'), ("c", "*p = 1;"),
            ("python", '"""Doc."""\nX = 1'), ("go", "package x\n\nvar x = 1"), ("c", "# define X 1"),
            ("haskell", "module Main (main) where\nimport X\n\ntype NonnegRange = Range Integer")]
    assert not any(_imports_only(text, language) for language, text in code)
    assigning = _assignment(frozenset({"timeout", "debug", "max_size"}))
    lines = "run(\n    TIMEOUT=5,\n)\nif DEBUG: level = 1\n * MAX_SIZE = 10\nTIMEOUT => 5,\nDEBUG == 1\n"
    assert [m.group(0).strip() for m in assigning.finditer(lines)] == ["TIMEOUT="]  # the keyword, at its indent
    assert [m.group(0) for m in assigning.finditer("TIMEOUT: int = 3\nconst MAX_SIZE = 10;\n")] == [
        "TIMEOUT: int =", "const MAX_SIZE ="]
    assert not list(_assignment(frozenset({"items"})).finditer("ıtems = 3\n"))  # ASCII case only


def test_a_header_beside_its_implementation_is_marked_as_its_declaration(tmp_path):
    """Asked how a C function works, its `.c` answers; its header's prototype and doxygen prose only name it
    (an embedded engineer's questions found the header first 15 times, docs/benchmarks.md). The ranking
    stage sees which header has its implementation in the workspace; one without (a port's macros) has none."""
    root = tmp_path / "kernel"
    (root / "include").mkdir(parents=True)
    (root / "include" / "queue.h").write_text(
        "/**\n * Post an item on a queue: the item is queued by copy, not by reference.\n */\n"
        "BaseType_t xQueueSend(QueueHandle_t xQueue, const void *pvItemToQueue);\n")
    (root / "queue.c").write_text(
        "BaseType_t xQueueSend(QueueHandle_t xQueue, const void *pvItemToQueue)\n{\n"
        "    /* copy the item on the queue */\n    return prvCopyDataToQueue(xQueue, pvItemToQueue);\n}\n")
    (root / "include" / "portmacro.h").write_text("#define portYIELD() vPortYield() /* queue item yield */\n")
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    workspace.indexer.update()
    rows = candidate_rows(workspace, "how is an item copied onto the queue")
    assert rows["include/queue.h"]["declaration_twin"] == 1.0
    assert rows["queue.c"]["declaration_twin"] == 0.0
    assert rows["include/portmacro.h"]["declaration_twin"] == 0.0
    workspace.close()


def test_example_and_benchmark_modules_a_projects_samples_and_a_generators_packages_have_roles():
    """A Zig and Scala walkthrough (docs/benchmarks.md): zio-http's `zio-http-example/` module was source (an
    example first for a library question), its generator's package `zio/http/gen/` generated, tigerbeetle's Java
    samples source (`src/clients/java` read as a source set) and its `k_way_merge_benchmark.zig` source."""
    assert file_role("zio-http-example/src/main/scala/example/StaticFiles.scala") == "example"
    assert file_role("zio-http-example-digest-auth/src/main/scala/example/auth/digest/core/NonceService.scala") \
        == "example"
    assert file_role("zio-http-benchmarks/src/main/scala/zio/http/benchmarks/ServerBenchmark.scala") == "example"
    assert file_role("packages/react-demo/src/App.tsx") == "example"
    # a component's folder named with the word is no module of examples
    assert file_role("frontend/src/app/tutorial-mode-warning/tutorial-mode-warning.component.ts") == "source"
    assert file_role("zio-http-gen/src/main/scala/zio/http/gen/openapi/EndpointGen.scala") == "source"
    assert file_role("app/src/main/java/com/acme/build/Builder.java") == "source"
    assert file_role("app/build/generated/source/R.java") == "generated"
    assert file_role("src/clients/java/samples/two-phase/src/main/java/Main.java") == "example"
    assert file_role("src/clients/java/src/main/java/com/tigerbeetle/Client.java") == "source"
    assert file_role("src/lsm/k_way_merge_benchmark.zig") == "example"
    assert file_role("src/lsm/k_way_merge.zig") == "source" and file_role("src/benchmark.zig") == "source"
    # a benchmark asked for outright reads them as source ("TCP ping pong benchmark": libxev's TCP watcher first)
    for query in ("TCP ping pong benchmark", "benchmark that pummels async notifications from several threads"):
        assert "example" in roles_read_as_source(query.lower().split(), text=query)
    assert "example" not in roles_read_as_source("how fast is the parser".split(), text="how fast is the parser")
