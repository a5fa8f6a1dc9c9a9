"""What a file is: source, test, docs, example, changelog, config, generated copy, notebook, other.

The role is a ranking feature, never a filter: a query about tests must still find tests, so the ranker
learns how much each role is worth for each kind of query (`query_asks_for`). Roles come from the path
(the conventions of the chunked languages and their ecosystems), and two from content: a source file as
dense as minified code, or whose head says a tool wrote it, is generated (`role_codes`). A file whose
chunks are mostly verbatim copies of chunks elsewhere in the workspace (a committed bundle, a vendored
copy) is measured separately by the ranker from content hashes, since neither can tell which copy is the
original.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from noul_lsp.chunking.languages import LANGUAGES, shell_startup_file

ROLES = ("source", "test", "docs", "example", "changelog", "config", "generated", "notebook", "other")
ROLE_INDEX = {role: index for index, role in enumerate(ROLES)}

#: (`.y`, `.l`: Bison's and flex's sources, the grammar people write; their output is `generated`)
_CODE_SUFFIXES = frozenset({
    ".py", ".pyi", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs", ".java", ".c", ".h",
    ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".rb", ".kt", ".scala", ".swift", ".cs", ".php", ".lua", ".sh",
    ".pyx", ".pxd", ".m", ".mm", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".dart", ".vue", ".svelte",
    ".kts", ".sc", ".zig", ".bash", ".fs", ".jl", ".r", ".nim", ".groovy", ".y", ".yy", ".l", ".ll",
    ".rake", ".ru", ".builder", ".jbuilder",  # Ruby: rake tasks (they were `other`), Rack's `config.ru`, Rails' views
    ".razor",  # Blazor's components, as Vue's and Svelte's (eShopOnWeb's admin pages were `other`, 30th to 76th)
    ".tf", ".tofu", ".hcl",  # a Terraform module's blocks are its code (they were `other`)
    # a service's schema and interfaces, written by hand and read by its code: SQL migrations (a table asked for by
    # name was 14th, under the Go models that name it), protobuf's and Thrift's services and messages (under
    # their generated `.pb.go`), GraphQL schemas, Prisma's; Bazel's Starlark macros
    ".sql", ".proto", ".thrift", ".graphql", ".graphqls", ".gql", ".prisma", ".bzl", ".star",
    # a firmware's assembly (a reset handler, a port's context switch: `.S` lowercased) and its linker scripts'
    # memory maps: FreeRTOS's `portASM.S` and pico-sdk's `crt0.S` and `memmap_default.ld` were `other`, past the
    # tenth for what they alone hold
    ".s", ".asm", ".ld", ".lds",
    # a game's scripts and shaders: Godot's GDScript and shading language, GLSL's, HLSL's and WGSL's stages (they
    # were `other`, three logits under a C# demo of the same project: the C# files, 2.6% of godot-demo-projects'
    # chunks, took a quarter of the first ten places)
    ".gd", ".gdshader", ".gdshaderinc", ".shader", ".glsl", ".vert", ".frag", ".geom", ".comp", ".tesc", ".tese",
    ".hlsl", ".fx", ".wgsl", ".metal",
    # a dotfiles repository's zsh and Vim script (`zsh/configs/history.zsh` was a changelog, by its stem)
    ".zsh", ".vim",
})
_DOC_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc", ".asciidoc", ".org", ".tex", ".texi", ".man", ".1", ".mdx",
                           ".scd"})
_CONFIG_SUFFIXES = frozenset({".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".xml", ".conf", ".properties",
                              ".gradle", ".cmake", ".mk", ".lock", ".editorconfig", ".env",
                              ".tfvars",
                              # an app's platform settings: iOS's and macOS's property lists, entitlements and Xcode's
                              # build settings (an `Info.plist` was `other`, a `Release.xcconfig` a changelog);
                              # Flutter's translations (`app_en.arb`, JSON under another name)
                              ".plist", ".entitlements", ".xcconfig", ".arb",
                              # Xcode's schemes, test plans and Swift Package Manager's pins; iOS's and macOS's
                              # translations (`InfoPlist.strings`, a String Catalog), as Android's `strings.xml`;
                              # ProGuard's and R8's rules (`proguard-rules.pro`): they were `other`
                              ".xcscheme", ".xctestplan", ".resolved", ".strings", ".stringsdict", ".xcstrings",
                              ".pro", ".xcworkspacedata",
                              # Haskell's Cabal packages and Nix's expressions (a build's settings: `other`)
                              ".cabal", ".nix",
                              # Unity's assembly definitions and input actions (JSON under their own names)
                              ".asmdef", ".asmref", ".inputactions"})
#: MyBatis' mappers (`src/main/resources/mapper/UserMapper.xml`): a Java service's SQL, source (as config, first
#: in both legs, they came 11th to 40th)
_MAPPER_FOLDERS = frozenset({"mapper", "mappers", "mybatis", "sqlmap", "sqlmaps"})  # (iBATIS' `<sqlMap>`s)
#: the kinds of file that hold a tool's settings, never its history
_SETTINGS_SUFFIXES = frozenset({".xcconfig", ".entitlements", ".plist", ".toml", ".properties", ".gradle", ".ini",
                                ".cfg", ".conf"})
_CONFIG_NAMES = frozenset({"makefile", "dockerfile", "justfile", "rakefile", "gemfile", "procfile", "setup.py",
                           "setup.cfg", "tox.ini", "noxfile.py", "conftest.py", "cmakelists.txt", "build.rs",
                           "package.json", "tsconfig.json", "cargo.toml", "go.mod", "go.sum", "pyproject.toml",
                           ".gitignore", ".gitattributes", ".pre-commit-config.yaml", "codecov.yml",
                           "build.gradle.kts", "settings.gradle.kts", "build.zig", "package.swift", "mix.exs",
                           "jenkinsfile", "containerfile", "vagrantfile", "tiltfile", ".terraform.lock.hcl",
                           # Bazel's build files (they were `other`), buf's (protobuf's build tool) settings
                           "build.bazel", "workspace.bazel", "module.bazel", "buf.yaml", "buf.work.yaml",
                           "buf.lock", "gnumakefile",
                           # CocoaPods', fastlane's and Homebrew's bundle files beside an app
                           "podfile", "fastfile", "appfile", "brewfile",
                           # Cabal's project file beside its packages
                           "cabal.project", "cabal.project.local", "cabal.project.freeze"})
#: Bazel's build files without an extension, on the name's own case (a `script/build` is a script)
_CASED_CONFIG_NAMES = frozenset({"BUILD", "WORKSPACE"})
#: buf's generation settings (`buf.gen.yaml`, and one module's: grpc-gateway's `examples/.../opaque.buf.gen.yaml`):
#: config wherever they are, the `.gen` of their name no generator's output
_BUF_SETTINGS = ("buf.gen.yaml", "buf.gen.yml")
#: a Helm chart's code, beside its `Chart.yaml`: its templates (`templates/*.yaml`, `_helpers.tpl`: helm-charts'
#: manifests were config and its helpers other, below the repository's few Python scripts) and its
#: `values.yaml`, the chart's settings each documented where it is declared (as a Terraform module's
#: `variables.tf`), asked for as "where is X configured". A `templates/` folder of anything else (CI templates,
#: cookiecutter, Ansible, a web framework's pages) keeps its role
_CHART_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl", ".gotmpl", ".json")
_CHART_VALUES = frozenset({"values.yaml", "values.yml"})
#: Go templates in a templates folder of a workspace with Terraform or a Helm chart: a Terraform module's
#: `templatefile()` sources (terraform-aws-eks' `templates/windows_user_data.tpl`), rendered by its code; in
#: another workspace a `.tpl` is as likely a web page (Smarty's), which keeps its role
_GO_TEMPLATE_SUFFIXES = (".tpl", ".gotmpl")
_RENDERS_GO_TEMPLATES = (".tf", ".tofu", "/Chart.yaml")
#: a dbt project's settings (its `vars`, each layer's materialization and refresh policy), asked for as what the
#: warehouse does ("how many days does the incremental lookback use": cal-itp's, as config, 109th). Its models'
#: properties (a column's documentation and tests) stay config: their prose outranked the models' SQL they
#: describe (read as source, a model's YAML came first for "staging model for zendesk support tickets")
_DBT_PROJECT = "dbt_project.yml"
_YAML_SUFFIXES = (".yml", ".yaml")
#: Airflow's DAG folder (the repository's `dags/` or an `airflow/dags/`): YAML there declares DAGs and their tasks
#: (gusty's `METADATA.yml`, dag-factory's files), asked for by what a DAG does and when it runs (cal-itp's
#: Littlepay sync schedule, as config: 25th, first in both legs)
_DAG_FOLDERS = frozenset({"dags"})
#: a Jinja2 template an Ansible role (or Salt's state) renders onto its hosts (`templates/k3s.service.j2`,
#: `default.vcl.j2`): the project's code, as a Helm chart's templates are. As `other` the template a question
#: was about came under the playbook that copies it
_RENDERED_TEMPLATE = ".j2"
#: Ansible's inventories in INI, with no extension: the hosts and their groups
_INVENTORY_NAMES = frozenset({"inventory", "inventories", "hosts"})
#: pip's requirement files (`requirements.txt`, `requirements-dev.txt`, `requirements/base.txt`): a `.txt` is
#: documentation otherwise
_REQUIREMENTS = re.compile(r"requirements([-_.][\w.-]*)?\.(txt|in)|(dev|base|test|prod)[-_]?requirements\.txt")
#: (not a release tool's settings: `release-please-config.json`, `release-drafter.yml`)
_CHANGELOG = re.compile(r"^(?!.*(?:config|settings|please|drafter))"
                        r"(changelog|changes|history|news|releases?|release[-_]notes|whatsnew)([-_.].*)?$")
#: (`__mocks__`: Jest's and Vitest's module doubles; `__testfixtures__`: jscodeshift's input and expected output
#: of each codemod, code that reads like the library it rewrites; `__snapshots__`, `__fixtures__` alike)
_TEST_FOLDERS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "test_data",
                           "fixtures", "e2e", "integration_tests", "unittests", "__mocks__", "__testfixtures__",
                           "__fixtures__", "__snapshots__",
                           # Flutter's: its integration tests' robots and helpers, flutter_driver's entry points
                           "integration_test", "test_driver"})
#: the test folders whose other files (not code) are a test's data: not RSpec's `spec/` (a `spec/protocol.md` is
#: a specification)
_TEST_DATA_FOLDERS = _TEST_FOLDERS - {"spec", "specs"}
#: a repository's fuzzing harnesses and corpora, at its top (cargo-fuzz's `fuzz/`, OSS-Fuzz's `fuzzing/`; Go's
#: `internal/fuzz` is a fuzzing engine's source)
_FUZZ_FOLDERS = frozenset({"fuzz", "fuzzing"})
#: a file whose kind is a test (caddy's Caddyfile adapt tests, PHP's `.phpt`, lit's and sqllogictest's `.test`)
_TEST_SUFFIXES = frozenset({".caddyfiletest", ".phpt", ".test"})
_DOC_FOLDERS = frozenset({"doc", "docs", "documentation", "man", "site", "website", "guide", "guides"})
_TUTORIAL_FOLDERS = frozenset({"tutorial", "tutorials"})
#: a language's library folder, whose files are its library whatever their names (below no test folder)
_LIBRARY_FOLDERS = ((".dart", "lib"), (".sql", "macros"))
_PAGE_SUFFIXES = frozenset({".md", ".rst", ".adoc", ".asciidoc"})
_EXAMPLE_FOLDERS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "tutorial",
                              "tutorials", "cookbook", "bench", "benches", "benchmark", "benchmarks"})
_GENERATED_FOLDERS = frozenset({"dist", "build", "out", "vendor", "vendored", "_vendor", "third_party",
                                "thirdparty", "generated", "gen", "node_modules", "bundle",
                                "__generated__", "umd", ".hydra", "multirun", "lightning_logs"})
#: what a Unity project imports into its `Assets/` folder from others: TextMesh Pro (its shaders, scripts and fonts
#: were the project's source, a TMP shader third for the project's render pipeline settings) and native or managed
#: plugins
_UNITY_IMPORTED = frozenset({"textmesh pro", "plugins"})
#: `external/` holds copied libraries in C and C++ projects (raylib's GLFW, miniaudio, stb; `extern/`, `3rdparty/`,
#: `deps/`, and `bundled/`, spdlog's copy of fmt: 55% of its chunks, first for its own colour codes); elsewhere it is
#: the project's own code about outside services (a homelab's Terraform, Makefile and playbook were `generated`)
_EXTERNAL_FOLDERS = frozenset({"external", "extern", "3rdparty", "deps", "bundled"})
#: (C's and C++'s files as the chunker reads them, and Objective-C's: a copy kept by hand drifted from it)
_C_FAMILY_SUFFIXES = frozenset({*LANGUAGES["c"].extensions, *LANGUAGES["cpp"].extensions, ".m", ".mm"})
#: a copied release of another project, by its folder's version (`zlib-1.3.1/`, `lua-5.4.6/`); not below a test
#: folder, whose role (`test`) the ranker weighs down twice as much: yaml-cpp's `test/googletest-1.16.0/` as
#: `generated` came first for a mutex that yaml-cpp does not have
_RELEASE_FOLDER = re.compile(r"[a-z][\w+.]*?-v?\d+(?:\.\d+)+")
#: reverse-domain package roots (Java, Kotlin, Scala): com/example/app is a package, not an example folder
_DOMAIN_PREFIXES = frozenset({"com", "org", "net", "io", "dev", "edu", "gov", "me", "co"})
#: a Gradle or Maven project's main source set, on the path's own case: `src/main`, Kotlin multiplatform's
#: `src/commonMain`, `src/jvmMain`, `src/linuxX64Main` (`domain` is none); only for the JVM's languages
_MAIN_SOURCE_SET = re.compile(r"main|[a-z][A-Za-z0-9]*Main")
#: what a Gradle source set holds, in the folder below it (`src/prod/kotlin/`, `src/demo/res/`,
#: `src/main/proto/`): the folder above is a source set whatever its name, an Android app's product flavour or
#: build type included (nowinandroid's `src/demo/` and `src/prod/` were examples, `demo` being one's name)
_SOURCE_SET_KINDS = frozenset({"java", "kotlin", "scala", "groovy", "res", "resources", "assets", "proto", "aidl",
                               "jni", "cpp", "baselineprofiles", "generated"})
#: a source set of tests (`src/testDemo/`, `src/androidTestProd/`), on the path's own case
_TEST_SOURCE_SET = re.compile(r"(?:android|unit|integration|screenshot)?[tT]est(?:[A-Z]\w*)?")
_JVM_SUFFIXES = frozenset({".java", ".kt", ".kts", ".scala", ".groovy"})
#: (git's hooks too: `hooks/post-up`, `git_template/hooks/pre-commit`, husky's, were `other` beside `bin/`'s source)
_SCRIPT_FOLDERS = frozenset({"bin", "libexec", "sbin", "script", "scripts", "hack", "hooks", ".githooks", ".husky"})
#: a dotfiles repository's settings kept without their dot (`gitconfig`, `gitmessage`, `psqlrc`, `rcrc`): config, as
#: `.gitconfig` is (they were `other`)
_DOTFILE = re.compile(r"git(?:config|ignore|message|attributes)(?:\.[\w-]+)?|[a-z]+rc(?:\.local)?")
#: Vim's startup files, with or without their dot (`vimrc`, `.gvimrc`, `vimrc.bundles`): Vim script
_VIMRC = re.compile(r"\.?g?vimrc(?:[._-][\w.-]*)?")
#: languages whose folders of code are packages of the module: a Go file under `doc/` is the package `doc`
#: (cobra's man and markdown generators, urfave/cli's `docs`), built and shipped with the rest; Go keeps its
#: documentation in comments and markdown, never in code under a docs folder (as Python's conf.py is)
_PACKAGE_FOLDER_SUFFIXES = frozenset({".go"})
#: a `news` file is release notes as a page (`NEWS`, `NEWS.md`); as data it is an app's (nowinandroid's demo feed,
#: `assets/news.json`, was a changelog)
_NEWS_SUFFIXES = frozenset({"", ".md", ".rst", ".txt", ".adoc"})
_CHANGELOG_FOLDERS = frozenset({"changelog", "changelog.d", "changes", "newsfragments", "news", "releasenotes"})
#: a benchmark's file beside the code it measures (`k_way_merge_benchmark.zig`, leveldb's `db_bench.cc`)
_BENCHMARK_FILE = re.compile(r".+[_-]bench(?:mark)?s?")
#: the words of a module's folder name (`zio-http-example`, `react_demo`)
_MODULE_WORDS = re.compile(r"[-_]")
_TEST_FILE = re.compile(r"(^test_.*|.*_test|.*_tests|.*[._-](test|spec|tftest)|^tests?|.*_fuzz)$")
#: a test runner's set-up module (`test-setup.ts`, `setupTests.js`, `vitest.setup.ts`, `jest.setup.js`), on the
#: stem's lower case
_TEST_SETUP = re.compile(r"tests?[-_.]?setup|setup[-_.]?tests?|(jest|vitest|karma|mocha)[-_.]setup")
#: a build, lint or test tool's configuration written as code: `vite.config.ts`, `eslint.config.js`,
#: `karma.conf.js`, `webpack.config.babel.js`, and the dot files `.eslintrc.cjs`, `.prettierrc.js` (on the
#: lower-cased name). Named tools only: a program's own `app.config.ts` or `database.config.ts` is its source
_CONFIG_CODE = re.compile(
    r"(?:root\.)?(?:vite|vitest|eslint|prettier|babel|jest|webpack|rollup|rolldown|tsup|tsdown|postcss|tailwind|next"
    r"|nuxt|svelte|astro|playwright|cypress|karma|commitlint|stylelint|metro|esbuild|vue|remix|docusaurus|knip"
    r"|typedoc|wrangler|uno|lint-staged|size-limit|nodemon|ava|mocha|protractor|storybook|turbo|electron-builder)"
    r"(?:\.[a-z0-9_-]+)*\.(?:config|conf)(?:\.[a-z0-9_-]+)*\.[cm]?[jt]s"
    r"|\.[a-z0-9_-]+rc(?:\.[a-z]+)?|(?:gulpfile|gruntfile)(?:\.[a-z0-9_-]+)*\.[cm]?[jt]s")
#: CamelCase test classes and test projects of Java, Kotlin, C#, Swift and PHP (`ClientTest.kt`,
#: `SessionTests.swift`, `FtpAdapterTestCase.php`; folders `Polly.Core.Tests`, `commonTest`), matched on the
#: path's own case so that `Latest.java` or `contest/` stay source (not `Spec`: kotlinpoet's `TypeSpec`)
_CAMEL_TEST = re.compile(r"[a-z0-9]Test(?:s|Case)?$")
_TEST_PROJECT = re.compile(r".*\.(tests?|specs?)$|.*[-_]tests$"
                           r"|(.*[-_.])?test[-_]?(utils?|utilities|helpers?|support|mocks?|fakes?)$")
#: test-support folders written in CamelCase (flysystem's `AdapterTestUtilities/`), on the path's own case
_CAMEL_TEST_SUPPORT = re.compile(r"(^|[a-z0-9])Test(Utils?|Utilities|Helpers?|Support)$")
#: test doubles named as such in a class-named file (flysystem's `S3ClientStub.php`, `StubZipArchive.php`);
#: not "Mock": Mockito's `Mock.java` and WireMock's `WireMockServer.java` are those libraries' product
_CAMEL_DOUBLE = re.compile(r"^[A-Z]\w*?(Stub|Fake)$|^(Stub|Fake)[A-Z]")
#: a Django migration (`migrations/0042_check_grace.py`), written by `makemigrations`: a model's every field
#: again, as operations; a query about the model found them before `models.py` (a query naming migrations
#: reads them as source, `_ASKS_UNWEIGHTED`)
_DJANGO_MIGRATION = re.compile(r"\d{4}_\w+$")
#: and a Rails migration (`db/migrate/20260613002038_add_quorum_to_tags.rb`, lobsters' 150 more in
#: `db/old_migrations/`): the schema's history, a table's columns again as each change made them; they took 32 of
#: the 200 first-five places of a Rails app's questions, above `db/schema.rb`, the schema itself. EF Core's
#: (`Migrations/20211231093753_FixShipToAddress.cs`, written by `dotnet ef migrations add`) alike: eShopOnWeb's
#: took the first five places for the table its fluent configuration maps, and Ecto's
#: (`priv/repo/migrations/20140623215331_add_package_owners_table.exs`) the first three for "Ecto schema for
#: package owners", the schema module fifth
_TIMESTAMPED_MIGRATION = re.compile(r"\d{14}_\w+(?:\.designer)?$")
#: generators' own names: minifiers, bundlers, protoc (and its gateway), Kubernetes' `zz_generated.*` (and Go's
#: `*_gen.go`, below: a Python `data_gen.py` is usually the generator, written by hand; `*_generated`, below: not
#: a table named after its data, a warehouse's `fct_funding_sources_directly_generated.sql`)
_GENERATED_FILE = re.compile(r"^zz_generated\..*|.*(\.min|_pb2|_pb2_grpc|\.pb|\.pb\.gw|\.generated|\.gen|"
                             r"\.bundle)$")
#: Dart's code generators' parts by build_runner's convention (json_serializable's and riverpod's `.g.dart`,
#: freezed's, mockito's `.mocks.dart`): the model a developer asks about is the part written by hand. Not the
#: names people also write by hand (`app.config.dart`, a `user.mapper.dart`): their generators' heads say so
_DART_GENERATED = re.compile(r".*\.(g|freezed|mocks)$")

#: query words that ask for a role (a query about tests wants tests; one about docs wants docs)
_ASKS = {
    # a fuzz target is a test (`fuzz/` is one's folder): "the fuzz target that parses random input" found none
    "test": frozenset({"test", "tests", "testing", "spec", "fixture", "fixtures", "testcase", "fuzz", "fuzzer",
                       "fuzzers", "fuzzing"}),
    "docs": frozenset({"doc", "docs", "documentation", "documented", "readme", "tutorial", "guide"}),
    "example": frozenset({"example", "examples", "demo", "sample", "benchmark", "benchmarks"}),
    "changelog": frozenset({"changelog", "release", "releases", "news"}),
    "config": frozenset({"config", "configuration", "setting", "settings", "toml", "yaml", "ci", "workflow"}),
}
ASKABLE_ROLES = tuple(_ASKS)
#: how a query that asks for tests may open ("show me the ...", "which ...")
_TESTS_OPENING = r"^\s*(?:(?:show\s+me|find|where\s+(?:is|are)|which|what)\s+)?(?:the\s+|a\s+|an\s+)?"
#: words before "tests that/for ..." that say what is done with tests or how many, not which tests are asked for
_NOT_A_TESTS_KIND = (r"(?:and|or|of|all|no|some|many|any|number|count|report|list|run|runs|running|rerun|skip|skips|"
                     r"skipped|collect\w*|select\w*|flaky|fail\w*|pass\w*|slow|broken|missing|disabled)")
#: a query that asks for tests outright: it opens with them ("tests for the bloom filter", "the test that
#: checks ...", "which spec covers ..."), names unit or integration tests, asks where something is tested, or
#: names a googletest (`TEST(SkipTest, Empty)`); not a commit's "add tests for ..." or a test named in passing
_ASKS_FOR_TESTS = re.compile(
    _TESTS_OPENING + r"(?:(?:unit|integration|regression|request|feature|functional|system|e2e|end-to-end|acceptance)\s+)?"
    r"(?:tests?|specs?)\b(?!\s*(?:runner|suite\s+runner)\b)"
    # a test framework named: lobsters' "rspec tests for story model validations" (its spec was 69th), realworld's
    # "MockMvc test for updating and deleting an article", koel's "PHPUnit feature test for uploading a song"
    r"|\b(?:unit|integration|regression|rspec|minitest|junit|mockmvc|jest|vitest|mocha|xunit|nunit|mstest|phpunit"
    # and a browser's test runners: "cypress end-to-end test for logging in" (umami's, second in both legs, 134th)
    r"|pest|dusk|cypress|playwright|selenium|puppeteer|webdriver(?:io)?)\s+"
    r"(?:(?:unit|feature|functional|integration|browser|e2e|end-to-end)\s+)?(?:tests?|specs?)\b"
    r"(?!\s*(?:runner|suite\s+runner)\b)"
    r"|\bwhere\b.*\btested\b|\bTEST(?:_F|_P)?\s*\(\s*\w+\s*,"
    # dbt's tests by their kinds: "data test checking micropayment timestamps ..." (its singular test, second and
    # fifth in the legs, was 86th)
    r"|\b(?:data|singular|generic)\s+tests?\b"
    # tests of something, asked for by what they do: "API tests that upload oversized files" (juice-shop's, first in
    # BM25 and third in meaning, was 103rd), "login page tests for ..."; not "fixtures and tests that ...", "run
    # tests for the frontend", "number of tests that failed", "pytest collects tests that match" (about running
    # them: the runner's source), nor "OpenAPI specs for ..." (a spec is a test only named by its kind, above)
    rf"|{_TESTS_OPENING}(?:(?!{_NOT_A_TESTS_KIND}\b)[\w-]+\s+){{1,2}}"
    r"tests\s+(?:that|which|for|of|checking|covering|verifying|asserting|exercising)\b",
    re.IGNORECASE)
#: a query that asks for a thing outright: it opens with it ("an example of infinite scrolling in React",
#: "the template of the project's settings page") or ends naming it ("the pagination demo", "the check details
#: template"). Not in passing ("for example on a timeout") nor as a domain's noun ("training examples for the
#: classifier", "replace $NAME placeholders in webhook templates")
_ASKING = r"^\s*(?:(?:show\s+me|find|where\s+(?:is|are)|which\s+is)\s+)?"
_OPENING = _ASKING + r"(?:the\s+|a\s+|an\s+)?"
_AFTER_OPENING = r"\s+(?:of|for|showing|that|which|using|with|on|in|app|apps|project|rendering)\b"


def _asked_outright(opening: str, closing: str) -> re.Pattern:
    """The pattern of a query that opens with `opening` (then what it is of or for) or ends with `closing`."""
    return re.compile(rf"{_OPENING}(?:{opening}){_AFTER_OPENING}|\w\s+(?:{closing})\s*[?.!]?\s*$", re.IGNORECASE)


#: examples: no label asks for one, so the ranker's asking weight is nil and the example role's prior (against
#: it: examples repeat the library's words) buried the example app 31st under the library it uses; "example
#: script that saves a table to an SVG file" put rich's `examples/save_table_svg.py` past the tenth; and a
#: benchmark, an example's role too ("TCP ping pong benchmark" put libxev's TCP watcher above `bench/ping-pongs.zig`)
_ASKS_FOR_EXAMPLES = _asked_outright(r"(?:examples?|demos?|benchmarks?)(?:\s+(?:scripts?|programs?|code|snippets?))?",
                                     r"example|demo|benchmark")
#: and an example named by what it shows, then described ("where is the infinite list example that fetches
#: posts ...": bloc's example was 14th, under the tutorial's pages and the library); one example, described by
#: a clause: not "training examples for the classifier"
_ASKS_FOR_A_NAMED_EXAMPLE = re.compile(
    _ASKING + r"the\s+(?!(?:each|any|every|one|no)\b)(?:[\w'-]+\s+){1,4}(?:example|demo)\s+(?:that|which|where)\b",
    re.IGNORECASE)
#: a settings file asked for outright, by what it sets ("JWT secret and session lifetime settings", "datasource
#: settings for the PostgreSQL profile"): Spring's `application.properties`, second by its words, was 71st, under
#: 70 Java files (the ranker's weight for a query naming config is against it: in the dev labels such a query
#: asks for code that reads a setting). "Settings" alone: "configuration" and "properties" name code as often
#: ("Spring Security configuration", "CSS properties of the button")
_ASKS_FOR_SETTINGS = _asked_outright(r"(?:(?!(?:a|an|the)\s)[\w'-]+\s+){0,3}settings", r"settings")
#: a query that opens with a verb asks for the code that does it ("change Matplotlib's default settings with
#: rcParams", "save the user's notification settings"), not for a settings file
_OPENS_WITH_A_VERB = re.compile(r"\s*(?:change|set|save|update|load|read|parse|apply|reset|override|get|store"
                                r"|persist|sync|restore|configure|adjust|toggle|edit|validate|migrate|write|merge)\b",
                                re.IGNORECASE)
#: an operator's pages asked for: a runbook, a decision record, or what to do when something fails ("alert that a
#: kubernetes volume is more than 80% full, what do I do": cal-itp's runbook, first in both legs, came 10th under
#: the code it is about, and out of the static pipeline's ten, where the docs' prior weighs most). Not "should I
#: ..." nor a playbook: ordinary questions ask that ("should we retry on HTTP 429"), Ansible's playbooks are YAML
_ASKS_FOR_RUNBOOKS = re.compile(
    r"\b(?:runbooks?|(?:architecture\s+)?decision\s+records?)\b|\bwhat\s+(?:do|should)\s+(?:i|we)\s+do\b",
    re.IGNORECASE)
#: a documentation page asked for outright, by what it is about ("which tutorial page explains adding a --version
#: flag", "page about asking for a password with hidden input", "docs section on keeping files out of the site",
#: "reference page for the Typer class", "where do the docs show how to open a URL"): a technical writer's
#: walkthrough of typer's and mkdocs' sites had 34 of its 68 answers a page, buried under the code they document
#: by the docs' prior (typer's Acc@1 0.18). Not a page of an app ("page that shows a single post", "page for a
#: hashtag's timeline": a page is documentation only said so or by what it explains), nor "guide" alone; a guide's,
#: an appendix's, a FAQ's page or entry too (rich's held-out walkthrough: "guide page for making your own class
#: renderable" past the tenth)
_ASKS_FOR_DOCS = re.compile(
    _ASKING + r"(?:the\s+|a\s+|an\s+)?(?:(?:docs?|documentation|tutorial|reference|user[\s-]guide|api)\s+)?"
    r"(?:(?:docs|documentation|tutorial|reference\s+page"
    r"|(?:docs?|documentation|tutorial|guide|appendix|faq|how-?to)\s+(?:page|pages|section|entry)|man\s?pages?"
    r"|step-by-step\s+guide|installation\s+instructions)\s+"
    r"(?:about|on|for|of|explaining|explains|describing|describes|documenting|documents|showing|shows|that|which"
    r"|listing|lists|walks|covering|covers)\b"
    r"|\bpages?\s+(?:about|explaining|describing|documenting|on\s+how|that\s+(?:explains|describes|documents))\b)"
    r"|^\s*where\s+(?:do|does)\s+(?:the\s+)?(?:docs|documentation|tutorial)\s+(?:show|explain|describe|say|mention)\b"
    r"|^\s*which\s+(?:[\w-]+\s+)?page\s+(?:documents|explains|describes|shows|lists|covers)\b",
    re.IGNORECASE)
#: a changelog's entry asked for outright ("release notes entry about vendoring Click", "changelog for the breaking
#: change to metavar printing", "changelog note about ..."): typer's and mkdocs' release notes came 30th to 92nd
#: under the code they name
_ASKS_FOR_RELEASE_NOTES = re.compile(
    _ASKING + r"(?:the\s+)?(?:release[\s-]+notes?|changelog|change\s+log|news)(?:\s+(?:entry|entries|section|notes?))?\s+"
    r"(?:for|about|of|on|that|which|where|mentioning)\b",
    re.IGNORECASE)
#: a dbt model's or source's properties asked for, in dbt's words: a column's documentation and tests, accepted
#: values, a source's definition and freshness, a seed's (the properties' YAML is config: as source its prose
#: outranked the models' SQL it describes; asked for, cal-itp's `_mart_audit.yml` came 37th, `_seeds.yml` 53rd)
_ASKS_FOR_PROPERTIES = re.compile(
    r"\b(?:where\s+(?:is|are)\s+[\w.`'-]+\s+documented|(?:column|model)\s+(?:descriptions?|docs|documentation)"
    r"|descriptions?\s+(?:of|for)\s+(?:the\s+)?(?:[\w-]+\s+)?columns|accepted[\s_]values|source\s+freshness"
    r"|(?:warn|error)_after|(?:not[\s_]null|relationships)\s+tests?|dbt\s+(?:sources?|seeds?|properties)"
    r"|seed\s+(?:files?|csv|mappings?))\b", re.IGNORECASE)
#: a web framework's templates: a template is `other` (a template's words are a page's, and as source the Django
#: app's templates took first places from its code), read as source when asked for
_ASKS_FOR_TEMPLATES = _asked_outright(r"(?:html\s+|jinja\s+)?templates?", r"(?:html\s+)?template")
#: and a page, a view or a partial asked for by what it shows ("user profile page showing karma", "HTML partial
#: for a single comment", "page that shows the QR code for enrolling"), a template engine named ("Thymeleaf page
#: listing veterinarians", "the ERB view"), an email's text: a web app's pages are its templates (lobsters'
#: views and PetClinic's Thymeleaf pages, first in both legs, came 5th to 22nd under the controllers); a noun
#: phrase of its own, not a verb's object ("scrape a web page with ...", "fetch the next page of ..."), and a
#: page or a view by what it shows ("Django view for user registration" asks for code)
_ASKS_FOR_A_PAGE = re.compile(
    _OPENING + r"(?:(?!(?:a|an|the)\s)[\w'-]+\s+){0,3}(?:(?:pages?|views?)\s+(?:that|which|showing|listing|where)"
    r"|partials?\s+(?:that|which|showing|listing|where|for|of|with))\b"
    r"|\b(?:thymeleaf|erb|haml|jinja2?|handlebars|mustache|twig|ejs|nunjucks|freemarker|jsp|gsp|razor|cshtml"
    r"|blazor|blade\s+(?:templates?|views?|components?|layouts?))\b"
    r"|^\s*(?:the\s+)?(?:text|body|wording)\s+of\s+(?:the\s+|an?\s+)?(?:[\w'-]+\s+){0,4}e-?mails?\b",
    re.IGNORECASE)
#: the folders a framework keeps its templates in (the path terms that mark a file of role `other` a template)
TEMPLATE_FOLDERS = ("templates", "template", "views", "layouts", "partials",
                    "pages")  # ASP.NET's Razor Pages (`Pages/Shared/_product.cshtml`)
#: a query that asks for styles: a stylesheet is role `other` (beside a component it is no answer to "which
#: component renders the share dialog"), and a frontend developer's "styles of the share dialog", "dark theme css
#: variables" put the stylesheet first in both legs 6th to 138th (elk's `global.css`, excalidraw's `theme.scss`).
#: Stylesheets by name (css, scss, a stylesheet), or styles of something on a screen; not a code style, a style
#: guide, a "styled" component, "less" as a word, nor the styles of a log line, a docstring or a retry
_ASKS_FOR_STYLES = re.compile(r"\b(?:s?css|stylesheets?|style\s*sheets?|less\s+(?:files?|variables?|mixins?))\b",
                              re.IGNORECASE)
_STYLES_OF_A_SCREEN = re.compile(
    r"(?<!\bcode\s)(?<!\bcoding\s)\b(?:styles|styling|style\s+(?:rules?|variables?))\b(?!\s+guide)", re.IGNORECASE)
_ON_A_SCREEN = re.compile(r"\b(?:buttons?|dialogs?|modals?|menus?|sidebars?|navbars?|nav\s*bars?|headers?|footers?"
                          r"|pages?|screens?|components?|themes?|dark|colou?rs?|fonts?|layouts?|scrollbars?|dropdowns?"
                          r"|cards?|toolbars?|tooltips?|forms?|inputs?|icons?|animations?|responsive|mobile|hover"
                          r"|panels?|tabs?|popovers?|banners?|widgets?)\b", re.IGNORECASE)
#: the path terms of a stylesheet (symbols.py keeps these suffixes as terms)
STYLESHEET_TERMS = ("css", "scss", "less")
#: a query that names a tool asks for the tool's files, config (a Dockerfile, a Makefile, a compose file, an env
#: file, Bazel's BUILD files, buf's settings, an OpenAPI spec), read as source then: the ranker's weight for a
#: query naming config is against config (it asked for a setting of the code, in the dev labels), so "which
#: workflow publishes the chart release" put helm-charts' `.github/workflows/release.yaml` 43rd, under its
#: scripts, and "the Dockerfile that copies the migrations" supabase/auth's Dockerfile 93rd, under `hack/*.sh`.
#: Each tool: the words that name it, and the path terms of its files (split as `symbols.path_terms` splits a
#: path: `docker-compose-dev.yml` carries `docker`, `compose`, `dev`). Continuous integration: not seaborn's
#: `ci` argument ("the ci parameter"), and only the CI files (a Temporal or Airflow query names its own
#: workflows)
_TOOLS = (
    (re.compile(r"\b(?:workflows?|github\s+actions?|gitlab[\s-]ci|circleci|jenkins(?:file)?|travis|pipelines?"
                r"|ci(?:/cd)?\s+(?:workflows?|jobs?|pipelines?|config(?:uration)?|builds?|runs?|checks?|matrix|steps?"
                r"|lint)|(?:in|on)\s+(?:the\s+)?ci)\b", re.IGNORECASE),
     ("workflows", "gitlab", "circleci", "jenkinsfile", "pipelines", "travis", "buildkite")),
    (re.compile(r"\b(?:docker(?:file)?|containerfile|compose\s+(?:files?|services?|stack)|container\s+images?)\b",
                re.IGNORECASE), ("dockerfile", "docker", "compose", "containerfile")),
    (re.compile(r"\b(?:gnu)?makefile\b|\bmake\s+(?:targets?|recipes?)\b", re.IGNORECASE),
     ("makefile", "gnumakefile")),
    # CMake's files by the tool's name (pico-sdk's `pico_generate_pio_header` in a `.cmake` came under its Bazel
    # twin, which is source)
    (re.compile(r"\bcmake(?:lists)?\b", re.IGNORECASE), ("cmakelists", "cmake")),
    (re.compile(r"(?<![\w.])\.env\b|\b(?:env|dotenv)\s+files?\b|\benvironment\s+files?\b", re.IGNORECASE), ("env",)),
    # .NET's settings: "connection strings for the catalog and identity databases" put the first appsettings
    # file 35th
    (re.compile(r"\bconnection\s+strings?\b|\bappsettings\b", re.IGNORECASE), ("appsettings",)),
    (re.compile(r"\b(?i:bazel|starlark)\b|\bBUILD(?:\.bazel)?\s+files?\b"), ("bazel", "build", "workspace")),
    # protobuf's build tool by what it does or its files, not a program's `buf.Bytes()`
    (re.compile(r"\bbuf(?:\.(?:gen\.|work\.)?ya?ml|\s+(?:lint|generate|breaking|format|push|config(?:uration)?|modules?"
                r"|workspaces?|registry|plugins?|rules?|settings|files?|cli)\b)", re.IGNORECASE), ("buf",)),
    (re.compile(r"\b(?:openapi|swagger)\b", re.IGNORECASE), ("openapi", "swagger")),
    # a mobile app's platform settings: Gradle's builds (an Android app's SDK levels, its signing), pub's package
    # manifest, Android's manifest (its permissions, intent filters, components), Apple's property lists,
    # entitlements, Xcode's settings and CocoaPods; and the app's translations (localsend's `AndroidManifest.xml`
    # was first in both legs and 26th, its `pubspec.yaml` 28th, its `Info.plist` 52nd)
    (re.compile(r"\bgradle\b|\b(?:min|target|compile)Sdk(?:Version)?\b|\b(?:android|release|keystore)\b.*\bsigning\s*"
                r"configs?\b|\bsigning\s*configs?\b.*\b(?:android|release|keystore)\b"
                # a build type's signing ("how is the release build signed": the app's `build.gradle.kts` was 6th,
                # under a release script and a workflow)
                r"|\b(?:release|debug)\s+builds?\b.*\bsign(?:ed|s|ing)?\b"
                r"|\bsign(?:ed|s|ing)?\b.*\b(?:release|debug)\s+builds?\b",
                re.IGNORECASE), ("gradle",)),
    (re.compile(r"\bpubspec\b|\bpub\s+(?:get|dependenc(?:y|ies)|packages?)\b|\bdev_dependencies\b", re.IGNORECASE),
     ("pubspec",)),
    (re.compile(r"\bandroid\s*manifest\b|\bapp\s+manifest\b|\bintent[\s-]filters?\b|\buses-permission\b",
                re.IGNORECASE), ("androidmanifest", "manifest")),
    (re.compile(r"\binfo\.plist\b|\bxcconfig\b|\bpodfile\b|\bcocoapods\b|\busage\s+descriptions?\b"
                r"|^(?=.*\b(?:ios|macos|xcode)\b).*\b(?:plists?|entitlements|url\s+schemes?)\b"
                # an app's capability by its entitlement ("push notification entitlement and app group"), not a
                # user's ("the user has the entitlement to download")
                r"|\bentitlements?\s+files?\b|^(?=.*\b(?:push|aps|app\s+groups?|keychain|icloud)\b).*\bentitlements?\b",
                re.IGNORECASE),
     ("plist", "entitlements", "xcconfig", "podfile")),
    # Xcode's schemes, Gradle's version catalog, ProGuard's and R8's rules (nowinandroid's `libs.versions.toml`
    # was in no find's ten for "what version of Room are we on in the version catalog"; its rules files `other`)
    (re.compile(r"\bxcode\s+schemes?\b|\bxcschemes?\b", re.IGNORECASE), ("xcscheme", "xcschemes")),
    (re.compile(r"\bversion\s+catalogs?\b|\blibs\.versions\b", re.IGNORECASE), ("versions",)),
    (re.compile(r"\bproguard\b|\br8\b|\bkeep\s+rules\b", re.IGNORECASE), ("proguard", "rules")),
    # a dotfiles repository's tools: rcm's settings (which files `rcup` links: thoughtbot/dotfiles' `rcrc`, as config,
    # came 9th under the shell's files for "which files are excluded from being symlinked into home by rcm"), git's
    # and tmux's
    (re.compile(r"\brc(?:m|up|rc)\b", re.IGNORECASE), ("rcrc",)),
    (re.compile(r"\bgit\s+(?:alias(?:es)?|config(?:uration)?)\b|\bgitconfig\b", re.IGNORECASE), ("gitconfig",)),
    (re.compile(r"\btmux\b", re.IGNORECASE), ("tmux",)),
    # (and Java's resource bundles, `messages_de.properties`: "German translations of the form labels")
    (re.compile(r"\blocali[sz](?:ed|ation)\s+(?:strings?|texts?|labels?|messages?|files?)\b|\bl10n\b"
                r"|\barb\s+files?\b|\btranslat(?:ion|ed)\s+(?:strings?|files?|keys?)\b"
                r"|\btranslations\s+(?:of|for)\b"
                # an interface's words in a language ("English text of the sign in button", "English labels of the
                # toolbar tools": the app's `en.json` came 30th to 129th)
                r"|\b(?:english|french|german|spanish|japanese|chinese|default\s+language)\s+(?:texts?|wording|labels?"
                r"|strings?|messages?|copy)\b", re.IGNORECASE),
     ("i18n", "l10n", "arb", "locales", "translations", "messages")),
    # a scheduler's table of recurring jobs (Rails' `config/recurring.yml`, sidekiq-cron's `schedule.yml`):
    # "schedule of recurring background jobs" found lobsters' jobs, not the table that runs them
    (re.compile(r"\b(?:cron|recurring)\s+(?:background\s+)?(?:jobs?|tasks?)\b|\bcron\s+schedule\b", re.IGNORECASE),
     ("recurring", "schedule", "cron")),
    # a BI tool's exported assets (Superset's dashboards, charts and datasets as YAML, Grafana's JSON): "superset
    # dashboard for the suspicious behavior report", first in both legs, was 6th under the export command's code
    *((re.compile(rf"\b{tool}\s+(?:dashboards?|charts?|datasets?|panels?)\b", re.IGNORECASE), (tool, "dashboards"))
      for tool in ("superset", "grafana", "metabase", "redash")),
    # a web app's hosting and bundler settings, named with what they set ("netlify build command and redirects",
    # "Vercel deployment headers", "vite build config": `netlify.toml` first in BM25 came 28th, `vercel.json`
    # 45th, `vite.config.mts` 47th); not the service alone ("store the scene in Firebase" asks for code)
    *((re.compile(rf"\b{spelled}\b(?=.*\b(?:config(?:uration)?s?|settings?|builds?|deploy(?:ment)?s?|redirects?"
                  r"|rewrites?|headers?|rules?|plugins?|aliases?)\b)", re.IGNORECASE), (tool,))
      for tool, spelled in (("netlify", "netlify"), ("vercel", "vercel"), ("vite", "vite"), ("webpack", "webpack"),
                            ("rollup", r"rollup(?=\.config|\s+(?:config|plugins?))"),  # not "rollup of ..."
                            ("wrangler", "wrangler"), ("firebase", "firebase"), ("nginx", "nginx"))),
    # Ruby's gems: the Gemfile and a gemspec ("which gems provide rate limiting" put the Gemfile 35th)
    (re.compile(r"\b(?:gems|gemfile|gemspec|ruby\s+gem)\b", re.IGNORECASE), ("gemfile", "gemspec")),
)
#: query words that ask for a role no label asks for, so the ranker has no weight for the asking: a query
#: naming them reads those files as source, and the role's prior stops burying what it names ("the vendored
#: werkzeug safe_join" found the plain copy first). Not "generated" or "vendor": "where are CSRF tokens
#: generated", "the vendor name of a media type" ask for code that people write
_ASKS_UNWEIGHTED = {
    "generated": frozenset({"autogenerated", "vendored", "bundled", "protobuf", "minified", "migration",
                            "migrations"}),
    "notebook": frozenset({"notebook", "notebooks", "jupyter", "ipynb"}),
}


def file_role(path: str) -> str:
    """The role of a workspace-relative path (posix separators)."""
    cased = path.split("/")
    parts = path.lower().split("/")
    name = parts[-1]
    folders = parts[:-1]
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    suffix = f".{suffix}" if suffix else ""
    if suffix == ".hs":  # Haskell's capitalised folders are module namespaces: `Test/QuickCheck.hs` is the library
        folders = [folder for folder, as_written in zip(folders, cased[:-1], strict=True) if folder == as_written]
    if suffix == ".ipynb":
        return "notebook"
    if name.endswith(_BUF_SETTINGS):
        return "config"
    # below a main source set (`src/main/`, Kotlin's `src/commonMain/`) a folder is a package: kotlinpoet's
    # `.../metadata/specs/` is its metadata module's source, not specs, and zio-http's code generator
    # (`zio-http-gen/src/main/scala/zio/http/gen/`) no generated code
    main = next((i for i, f in enumerate(cased[:-1]) if suffix in _JVM_SUFFIXES and i and folders[i - 1] == "src"
                 and _MAIN_SOURCE_SET.fullmatch(f)), len(folders))
    if (_GENERATED_FILE.match(stem) or (suffix != ".sql" and stem.endswith("_generated"))
            or (suffix == ".go" and stem.endswith("_gen"))
            or (suffix == ".dart" and _DART_GENERATED.match(stem))
            or any(f in _GENERATED_FOLDERS for f in folders[:main])
            or (suffix in _C_FAMILY_SUFFIXES and (not _EXTERNAL_FOLDERS.isdisjoint(folders)
                                                  or any(_RELEASE_FOLDER.fullmatch(f) and _TEST_FOLDERS.isdisjoint(
                                                      folders[:i]) for i, f in enumerate(folders))))
            or (suffix == ".py" and folders[-1:] == ["migrations"] and _DJANGO_MIGRATION.match(stem))
            or (suffix in (".rb", ".cs", ".exs") and any(f.endswith(("migrate", "migrations")) for f in folders)
                and _TIMESTAMPED_MIGRATION.match(stem))
            or any(f in _UNITY_IMPORTED and i and folders[i - 1] == "assets" for i, f in enumerate(folders))):
        return "generated"
    if "projectsettings" in folders:  # a Unity project's settings (`ProjectVersion.txt` was docs, `InputManager.asset`
        return "config"  # other)
    # bin/bats, libexec/rbenv-init, scripts/manage, hack/release: commands are scripts with no extension
    # (not scripts/README or LICENSE: a command is not named in capitals)
    script = not suffix and not cased[-1].isupper() and any(f in _SCRIPT_FOLDERS for f in folders)
    # a shell's startup files and zsh functions (read by the shell grammar), Vim's: code, not a dot file's config
    startup = shell_startup_file(path) or bool(_VIMRC.fullmatch(name))
    code = suffix in _CODE_SUFFIXES or startup
    if any(f in (".github", ".circleci") for f in folders) and not code and suffix not in (".md", ".rst"):
        return "config"  # a workflow named `release.yml` releases; it is no release's notes (a page is docs)
    # not a settings file named so (`Release.xcconfig`, cargo-release's `release.toml`); a changelog kept as data
    # (`CHANGELOG.json`, Maven's `changes.xml`) is one
    changelog = (_CHANGELOG.match(name) and suffix not in _SETTINGS_SUFFIXES
                 and not (stem.startswith("news") and suffix not in _NEWS_SUFFIXES)) or any(
        f in _CHANGELOG_FOLDERS for f in folders)
    if not code and not script and changelog:
        return "changelog"  # a document: `history.lua` or `builders/changes.py` is code
    # a Dart package's `lib/` is its library whatever the names in and above it: bloc_test's `blocTest` in
    # `packages/bloc_test/lib/src/bloc_test.dart` was a test (pub keeps tests in `test/`)
    # and a dbt project's macros are its library: a generic test's definition (`macros/test_unique_proportion.sql`,
    # dbt-utils' `macros/generic_tests/`) is what the project's YAML tests columns with (first in both legs, 98th
    # as a test); a test's fixture package, an integration test project's macros stay the tests'
    library = next((folder for kind, folder in _LIBRARY_FOLDERS if suffix == kind), None)
    in_library = library in folders and not any(
        f in _TEST_FOLDERS or _TEST_PROJECT.match(f) for f in folders[: folders.index(library)])
    source_set = _source_set(folders)
    if source_set < len(folders) and _TEST_SOURCE_SET.fullmatch(cased[source_set]):
        return "test"  # `src/testDemo/kotlin/...`, `src/androidTest/res/...`
    if suffix == ".exs" and folders[-1:] == ["config"]:
        # a Mix project's settings are code run at build and boot, asked for as the code is ("where is
        # secret_key_base read from the environment in production": hexpm's `config/runtime.exs`, first as
        # source, third as config); `config/test.exs` is the test environment's, no test
        return "source"
    if code and name not in _CONFIG_NAMES:
        if not in_library and (
                any(f in _TEST_FOLDERS or _TEST_PROJECT.match(f) for f in folders[:main]) or _TEST_FILE.match(stem)
                or (folders and folders[0] in _FUZZ_FOLDERS)
                or (_TEST_SETUP.fullmatch(stem) and suffix not in _JVM_SUFFIXES)
                or any(_CAMEL_TEST.search(part) or _CAMEL_TEST_SUPPORT.search(part) for part in cased[:-1])
                or _CAMEL_TEST.search(cased[-1][: len(stem)]) or _CAMEL_DOUBLE.search(cased[-1][: len(stem)])):
            return "test"
        if _BENCHMARK_FILE.fullmatch(stem) or any(_holds_examples(folders, i) for i in range(min(main, source_set))):
            # not a package below a main source set: Spring PetClinic's `src/main/java/org/springframework/samples/
            # petclinic/` was 30 files of examples, under the SQL seed data for 11 of its 16 questions; and below
            # any source set, by the kind of code it holds (`src/prod/kotlin/com/google/samples/...`, a flavour
            # named `src/demo/`); and a benchmark beside the code it measures (tigerbeetle's
            # `k_way_merge_benchmark.zig`, first for the merge it times)
            return "example"
        if _CONFIG_CODE.fullmatch(name) and not startup:  # a tool's configuration as code (a test's or an example's
            # stays theirs; `.bashrc` is a shell's code, no `.eslintrc`)
            return "config"
        if name.startswith("package@swift"):  # `Package@swift-5.9.swift`: the manifest for one Swift version
            return "config"
        if (suffix not in _PACKAGE_FOLDER_SUFFIXES and any(f in _DOC_FOLDERS for f in folders)) \
                or any(f.endswith(".docc") for f in folders):  # a DocC catalogue's tutorial steps
            return "docs"  # code shown in documentation (doc examples, sphinx extensions of the docs)
        if suffix == ".go" and stem == "doc":
            # Go's convention for a package's documentation: a comment above its package clause (miniflux's
            # `client/doc.go`, a usage example, was first in BM25 for "only admins may manage users in the API")
            return "docs"
        return "source"
    if name == "conftest.py":
        return "test"
    # a manifest or a dot file is config wherever it is (`fuzz/Cargo.toml`, `tests/package.json`, a test folder's
    # `.eslintrc.yml`)
    if name in _CONFIG_NAMES or cased[-1] in _CASED_CONFIG_NAMES or name.startswith(".") \
            or (_DOTFILE.fullmatch(name) and not script) \
            or _CONFIG_CODE.fullmatch(name) \
            or (name.startswith("dockerfile.") and suffix not in _DOC_SUFFIXES) or suffix == ".dockerfile" \
            or _REQUIREMENTS.fullmatch(name) \
            or (suffix == ".txt" and folders[-1:] == ["requirements"]):
        return "config"
    # a test's data is the test's, whatever its kind (Go's `testdata/import_glob0.txt` was docs, its `.json`
    # config; not a README, not in a docs folder); so is a file whose kind is a test (caddy's 233 `*.caddyfiletest`)
    in_docs = any(f in _DOC_FOLDERS for f in folders)
    kept_as_is = in_docs or stem.startswith("readme")  # a docs folder's pages and a README stay docs
    in_tests = any(f in _TEST_DATA_FOLDERS for f in folders) or (folders and folders[0] in _FUZZ_FOLDERS)
    if suffix in _TEST_SUFFIXES or (in_tests and not kept_as_is):
        return "test"
    # MyBatis' mappers, whatever package their folders mirror (Spring Initializr's `com/example/demo/mapper/`)
    if suffix == ".xml" and "config" not in stem and (
            any(f in _MAPPER_FOLDERS for f in folders) or cased[-1].endswith(("Mapper.xml", "Dao.xml"))):
        return "source"
    # an example is an example whatever its kind (just's `examples/cross-platform.just` was other, and asked
    # for as an example outright, not in the twenty)
    # (but a tutorial's pages are docs: litgpt's `tutorials/oom.md` and `tutorials/developer-docs/adding-models.md`,
    # its documentation site, were examples, first in both legs and 9th and 10th)
    tutorial_page = suffix in _PAGE_SUFFIXES and any(f in _TUTORIAL_FOLDERS for f in folders)
    if any(f in _EXAMPLE_FOLDERS for f in folders[:source_set]) and not kept_as_is and not tutorial_page:
        return "example"
    dag_folder = any(f in _DAG_FOLDERS and (i == 0 or folders[i - 1] == "airflow") for i, f in enumerate(folders))
    if (suffix in _YAML_SUFFIXES and dag_folder) or name == _DBT_PROJECT:
        return "source"
    if suffix == _RENDERED_TEMPLATE and not in_docs:  # rendered by the project's code: an Ansible role's `templates/`
        return "source"
    if not suffix and not script and (name in _INVENTORY_NAMES or any(f in _INVENTORY_NAMES for f in folders)):
        return "config"  # an Ansible inventory in INI (`inventories/vagrant/inventory`, `hosts`)
    if suffix in _CONFIG_SUFFIXES:
        return "config"
    if suffix == ".txt" and "resources" in folders and not in_docs:
        return "other"  # data a program loads (Unity's and Java's resources: a level generator's grammar was docs)
    if suffix in _DOC_SUFFIXES or in_docs:
        return "docs"
    return "source" if script else "other"


#: a code file with more BM25 terms a line than this is minified or bundled onto long lines, whatever its
#: path (a committed `public/js/app.js`): code people write averages 3 to 6 terms a line, its chunks' path
#: and symbol terms included (the test of GitHub's linguist: more than 110 characters a line in .js or .css).
#: Only past a few hundred terms: a one-line file deep in folders is dense with its path's terms alone
MINIFIED_TERMS_PER_LINE = 40.0
MINIFIED_TERMS_AT_LEAST = 400.0


def role_codes(paths: Sequence[str], terms: np.ndarray | None = None, lines: np.ndarray | None = None,
               tool_written: np.ndarray | None = None, builds_objects: np.ndarray | None = None) -> np.ndarray:
    """int8 role index (ROLE_INDEX) per path; a Helm chart's templates and values (beside a `Chart.yaml` among
    the paths) are source, and so is a configuration that names the classes it builds (`builds_objects`, per
    path: Hydra's config groups, LightningCLI's recipes: the code of an ML project, where as config a model's
    config both legs put first came 11th to 46th); a source file as dense as minified code (its BM25 `terms`
    over its `lines`, per path) or whose head says a tool wrote it (`tool_written`: Go's `Code generated ... DO
    NOT EDIT`) is `generated`: the path cannot tell it from the code people write."""
    codes = np.fromiter((ROLE_INDEX[file_role(p)] for p in paths), dtype=np.int8, count=len(paths))
    if not len(codes):
        return codes
    codes = with_charts(codes, paths, chart_folders(paths), renders_go_templates(paths))
    written = np.zeros(len(codes), dtype=bool) if tool_written is None else tool_written.astype(bool)
    if terms is not None and lines is not None:
        written |= (terms >= MINIFIED_TERMS_AT_LEAST) & (terms > MINIFIED_TERMS_PER_LINE * np.maximum(lines, 1))
    codes[(codes == ROLE_INDEX["source"]) & written] = ROLE_INDEX["generated"]
    if builds_objects is not None:  # (after the density test: a config's long list of class names is no bundle)
        settings = (codes == ROLE_INDEX["config"]) | (codes == ROLE_INDEX["other"])
        codes[settings & builds_objects.astype(bool)] = ROLE_INDEX["source"]
    return codes


def chart_folders(paths: Iterable[str]) -> set[str]:
    """The folders that hold a Helm chart's `Chart.yaml` among the paths (each "" or ending in "/")."""
    return {p[: -len("Chart.yaml")] for p in paths if p == "Chart.yaml" or p.endswith("/Chart.yaml")}


def renders_go_templates(paths: Iterable[str]) -> bool:
    """Whether the paths hold Terraform or a Helm chart, whose code renders the Go templates of its folders."""
    return any(p.endswith(_RENDERS_GO_TEMPLATES) or p == "Chart.yaml" for p in paths)


def with_charts(codes: np.ndarray, paths: Sequence[str], charts: set[str], go_templates: bool = False) -> np.ndarray:
    """The role codes with a Helm chart's templates and values read as source, given the folders that hold a
    `Chart.yaml` (`chart_folders` of the whole corpus: a file edited since the last index is read with the
    chart it is in, not with the edited files alone), and, where the corpus renders Go templates
    (`renders_go_templates`), the `.tpl` files of its templates folders. A chart's tests and docs keep their
    roles."""
    if not (charts or go_templates) or not len(codes):
        return codes
    rendered = np.fromiter((_charts_code(p, charts) or (go_templates and _templates_folders_go_template(p))
                            for p in paths), dtype=bool, count=len(paths))
    read_as = (codes == ROLE_INDEX["config"]) | (codes == ROLE_INDEX["other"])
    return np.where(rendered & read_as, np.int8(ROLE_INDEX["source"]), codes).astype(np.int8)


def _templates_folders_go_template(path: str) -> bool:
    return path.endswith(_GO_TEMPLATE_SUFFIXES) and "templates" in path.split("/")[:-1]


def _charts_code(path: str, charts: set[str]) -> bool:
    """Whether a path is a Helm chart's template or values (`_CHART_TEMPLATE_SUFFIXES`, `_CHART_VALUES`), given
    the folders that hold a `Chart.yaml` (each "" or ending in "/")."""
    folder, _, name = path.rpartition("/")
    folder = f"{folder}/" if folder else ""
    if folder in charts:
        return name in _CHART_VALUES
    if not path.endswith(_CHART_TEMPLATE_SUFFIXES):
        return False
    parts = folder.split("/")  # each `templates` folder of the path, under a chart's folder
    return any(part == "templates" and "".join(f"{p}/" for p in parts[:index]) in charts
               for index, part in enumerate(parts))


def _holds_examples(folders: list[str], index: int) -> bool:
    """Whether `folders[index]` holds examples: it is named so (but `com/example/...` is a Java package named
    after a domain), or it is a module named for what it holds (a top folder, or one holding a `src/`): zio-http's
    `zio-http-example/` and `zio-http-benchmarks/` (150 and 18 files of source, an example first for "serve
    static files from a directory"), not a component's folder (`tutorial-mode-warning/`)."""
    folder = folders[index]
    if index and folders[index - 1] in _DOMAIN_PREFIXES:
        return False
    module = not index or folders[index + 1 : index + 2] == ["src"]
    return folder in _EXAMPLE_FOLDERS or (module and not _EXAMPLE_FOLDERS.isdisjoint(_MODULE_WORDS.split(folder)))


def _source_set(folders: list[str]) -> int:
    """The index of a Gradle source set's folder among a path's folders (`prod` of `app/src/prod/kotlin/...`,
    the folder below it one of `_SOURCE_SET_KINDS`), or their count when there is none. The last one: a
    project's samples are projects of their own (tigerbeetle's `src/clients/java/samples/two-phase/src/main/
    java/Main.java` read `clients` as a source set, and its samples as the client's source)."""
    return next((i for i in range(len(folders) - 2, 0, -1)
                 if folders[i - 1] == "src" and folders[i + 1] in _SOURCE_SET_KINDS), len(folders))


def query_asks_for(query_terms: Iterable[str], shape: str = "description") -> dict[str, bool]:
    """Which roles the query itself asks for, from its words. Only a short query asks: an issue text or a
    prompt mentions tests, docs and releases in passing ("the tests pass", "pytest 8.1") while asking for
    the code that misbehaves."""
    if shape == "long":
        return {role: False for role in _ASKS}
    words = set(query_terms)
    return {role: not words.isdisjoint(asked) for role, asked in _ASKS.items()}


def asked_tool_terms(text: str, shape: str = "description") -> tuple[str, ...]:
    """The path terms of the files of the tools a short query names (`_TOOLS`): its config files that carry
    them are read as source."""
    if shape == "long":
        return ()
    return tuple(term for pattern, terms in _TOOLS if pattern.search(text) for term in terms)


def asks_for_templates(text: str, shape: str = "description") -> bool:
    """Whether a short query asks for a template outright (`_ASKS_FOR_TEMPLATES`, `_ASKS_FOR_A_PAGE`): then the
    files of role `other` under a templates folder (`TEMPLATE_FOLDERS`) are read as source."""
    return shape != "long" and any(pattern.search(text) for pattern in (_ASKS_FOR_TEMPLATES, _ASKS_FOR_A_PAGE))


def asks_for_styles(text: str, shape: str = "description") -> bool:
    """Whether a short query asks for styles (`_ASKS_FOR_STYLES`, or styles of something on a screen): then the
    stylesheets (`STYLESHEET_TERMS`) of role `other` are read as source."""
    return shape != "long" and (_ASKS_FOR_STYLES.search(text) is not None or (
        _STYLES_OF_A_SCREEN.search(text) is not None and _ON_A_SCREEN.search(text) is not None))


def asks_for_tests(query_terms: Iterable[str], shape: str = "description", text: str = "") -> bool:
    """Whether a short query asks for tests, by a word (`_ASKS`) or outright (`_ASKS_FOR_TESTS`)."""
    terms = list(query_terms)
    return query_asks_for(terms, shape)["test"] or "test" in roles_read_as_source(terms, shape, text)


def roles_read_as_source(query_terms: Iterable[str], shape: str = "description", text: str = "") -> list[str]:
    """The roles a short query asks for by name that the ranker has no asking weight for (`_ASKS_UNWEIGHTED`),
    tests when the query asks for tests outright (`_ASKS_FOR_TESTS`), examples when it asks for an example
    (`_ASKS_FOR_EXAMPLES`), config when it asks for settings or a dbt model's properties (`_ASKS_FOR_SETTINGS`,
    `_ASKS_FOR_PROPERTIES`), docs when it asks for a runbook (`_ASKS_FOR_RUNBOOKS`). The ranker's weight for a
    query that merely names tests is against them (pytest's descriptions name fixtures and tests and want its
    source), and "tests for the bloom filter" put leveldb's bloom_test.cc 22nd."""
    if shape == "long":
        return []
    words = set(query_terms)
    read = [role for role, asked in _ASKS_UNWEIGHTED.items() if not words.isdisjoint(asked)]
    if _ASKS_FOR_TESTS.search(text):
        read.append("test")
    if _ASKS_FOR_EXAMPLES.search(text) or _ASKS_FOR_A_NAMED_EXAMPLE.search(text):
        read.append("example")
    if (_ASKS_FOR_SETTINGS.search(text) or _ASKS_FOR_PROPERTIES.search(text)) and not _OPENS_WITH_A_VERB.match(text):
        read.append("config")
    if _ASKS_FOR_RUNBOOKS.search(text) or _ASKS_FOR_DOCS.search(text):
        read.append("docs")
    if _ASKS_FOR_RELEASE_NOTES.search(text):
        read.append("changelog")
    return read
