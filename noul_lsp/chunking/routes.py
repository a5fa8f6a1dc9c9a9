"""The route a file-routed web app serves a file at, as its chunks' header: `page /login/alternative/code`.

SvelteKit, Next.js, Nuxt and their kind say where a page or an endpoint is served by its folders, and name its
file by its role alone (`+page.svelte`, `page.tsx`, `route.ts`, `index.vue`): every page of an app was a chunk
named `+page`, `page` or `POST`, and the embedder (which reads a chunk's header with its text) never saw where
it is served. "sign in with passkey page" put `signup/add-passkey/+page.svelte` above `login/+page.svelte`, and
"API route that receives tracking events" the client's tracker above umami's `app/api/send/route.ts` (four
frontend apps' walkthroughs: about twelve questions). The route is read from the path alone: a route group
`(main)` is no segment, `[id]` is a parameter `:id`, `[[server]]` an optional one, `[...slug]` the rest.
"""

from __future__ import annotations

import re

#: SvelteKit's files of a route (`src/routes/login/+page.svelte`): what each serves
_SVELTEKIT = {"+page": "page", "+layout": "layout", "+error": "error page", "+server": "endpoint",
              "+page.server": "page", "+layout.server": "layout"}
#: Next.js's app router's files of a route (`app/(main)/websites/[websiteId]/page.tsx`)
_APP_ROUTER = {"page": "page", "layout": "layout", "route": "API route", "loading": "loading page",
               "error": "error page", "not-found": "not-found page", "template": "layout"}
_SCRIPT_SUFFIXES = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".mts")
_PARAMETER = re.compile(r"\[\[\.\.\.(\w+)\]\]|\[\.\.\.(\w+)\]|\[\[(\w+)\]\]|\[(\w+)\]")


def _segment(folder: str) -> str | None:
    """A folder as a route's segment: None for a route group `(main)`."""
    if folder.startswith("(") and folder.endswith(")"):
        return None
    return _PARAMETER.sub(lambda m: f"*{m.group(1) or m.group(2)}" if m.group(1) or m.group(2)
                          else f":{m.group(3)}?" if m.group(3) else f":{m.group(4)}", folder)


def _route(folders: list[str]) -> str:
    return "/" + "/".join(segment for folder in folders if (segment := _segment(folder)) is not None)


def _below_last(folders: list[str], root: str) -> list[str]:
    """The folders below the last one named `root` (a route's folders under `routes/`, `app/`, `pages/`)."""
    return folders[len(folders) - folders[::-1].index(root):]


def file_route(path: str) -> str:
    """The route a workspace-relative path serves (`page /settings/interface`), or "" for a file that serves
    none (a component, a helper beside the pages, Next's `_app.tsx`)."""
    parts = path.split("/")
    folders, name = parts[:-1], parts[-1]
    stem = name.rsplit(".", 1)[0]  # (`[...slug].tsx`: its dots are the parameter's)
    if "routes" in folders and name.startswith("+"):  # SvelteKit
        kind = _SVELTEKIT.get(name.rsplit(".", 1)[0])
        return f"{kind} {_route(_below_last(folders, 'routes'))}" if kind else ""
    if not name.endswith(_SCRIPT_SUFFIXES + (".vue",)):
        return ""
    if "app" in folders and stem in _APP_ROUTER and name.endswith(_SCRIPT_SUFFIXES):  # Next.js's app router
        return f"{_APP_ROUTER[stem]} {_route(_below_last(folders, 'app'))}"
    for root, kind in (("api", "API route"), ("pages", "page")):  # Nuxt's pages and server routes, Next's pages
        if root not in folders or stem.startswith("_"):
            continue
        below = _below_last(folders, root)
        if root == "api" and "server" not in folders and "pages" not in folders:
            continue  # an `api/` folder of a client is no route
        leaf = [] if stem == "index" else [stem]
        prefix = ["api"] if root == "api" else []
        return f"{kind} {_route(prefix + below + leaf)}"
    return ""
