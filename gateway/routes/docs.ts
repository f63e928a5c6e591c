import { Hono } from "hono";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
// The package's own locator for its files; importing it also keeps swagger-ui-dist in the module
// graph, so Deno installs it even when nothing else imports it.
import swaggerUiDistPath from "swagger-ui-dist/absolute-path.js";
import { envelope, errorBody } from "@printshop/shared/http";
import { buildOpenApiDocument } from "@printshop/shared/openapi";
import { asyncApiDocument } from "@printshop/shared/events/asyncapi";

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
  hash: string;
  /** Query value that changes whenever the content does, so the URL can be cached forever. */
  version: string;
  /** Compressed on first demand; Deno.serve does not compress responses itself. */
  gzipped?: Uint8Array<ArrayBuffer>;
}

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";
const HTML = "text/html; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";

/** Files of swagger-ui-dist served under /docs/assets/; nothing else in the package is exposed. */
const PACKAGE_FILES: Record<string, string> = {
  "swagger-ui-bundle.js": JS,
  "swagger-ui.css": CSS,
};

// Kept out of the HTML so the page's CSP can forbid inline scripts.
const INIT_SCRIPT = `"use strict";
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: new URL(root.dataset.specUrl, document.baseURI).href,
    domNode: root,
    layout: "BaseLayout",
    presets: [SwaggerUIBundle.presets.apis],
    deepLinking: true,
    displayOperationId: true,
    filter: true,
    // The default would send the document to validator.swagger.io.
    validatorUrl: null,
  });
});
`;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes at runtime.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  // "Try it out" calls the API on this origin.
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

// Below this, gzip's overhead outweighs the saving.
const GZIP_MIN_BYTES = 1024;

const IMMUTABLE = "public, max-age=31536000, immutable";
// The document and page change with each deploy; revalidating with the ETag is cheap.
const REVALIDATE = "no-cache";

let assets: Map<string, Asset> | undefined;
let documentAsset: Asset | undefined;

function asset(body: Uint8Array<ArrayBuffer>, contentType: string): Asset {
  const hash = createHash("sha256").update(body).digest("base64url");
  return { body, contentType, hash, version: hash.slice(0, 12) };
}

/** Why /docs cannot serve `file` of the renderer's directory `dir`, as an operator can act on it. */
function unreadable(dir: string, file: string, error: unknown): Error {
  // The usual causes are a process whose --allow-read leaves out the package, or a missing
  // install; say which directory is needed instead of a bare permission error.
  return new Error(
    `/docs needs read access to ${dir} (swagger-ui-dist) and could not read ${file}: ${
      error instanceof Error ? error.message : String(error)
    }`,
    { cause: error },
  );
}

/**
 * Checks that the renderer's files can be read, without reading them: a broken install or a
 * missing --allow-read still fails at startup, not on a visit, while the ~2 MB of the bundle
 * and its stylesheet stay out of the gateway's memory until someone opens /docs (issue 15:
 * the gateway idles at ≤ 80 MB RSS, and most gateways never serve the page).
 */
function checkAssets(): void {
  const dir: string = swaggerUiDistPath();
  for (const file of Object.keys(PACKAGE_FILES)) {
    const path = join(dir, file);
    try {
      // Opened, not just stat'ed: the same read permission and existence a read needs.
      Deno.openSync(path, { read: true }).close();
    } catch (error) {
      throw unreadable(dir, file, error);
    }
  }
}

/** Reads the renderer's files once per process, on the first request that needs them. */
function loadAssets(): Map<string, Asset> {
  if (assets) return assets;
  const dir: string = swaggerUiDistPath();
  const loaded = new Map<string, Asset>();
  for (const [file, contentType] of Object.entries(PACKAGE_FILES)) {
    try {
      loaded.set(file, asset(Deno.readFileSync(join(dir, file)), contentType));
    } catch (error) {
      throw unreadable(dir, file, error);
    }
  }
  loaded.set("init.js", asset(new TextEncoder().encode(INIT_SCRIPT), JS));
  assets = loaded;
  return loaded;
}

/**
 * Built on the first request rather than at startup: a schema zod cannot represent then breaks
 * this endpoint only, not the gateway (and the OpenAPI tests catch it before a deploy).
 */
function openApiAsset(): Asset {
  documentAsset ??= asset(
    new TextEncoder().encode(JSON.stringify(buildOpenApiDocument())),
    JSON_TYPE,
  );
  return documentAsset;
}

let asyncApiAsset: Asset | undefined;

function eventsAsset(): Asset {
  asyncApiAsset ??= asset(new TextEncoder().encode(JSON.stringify(asyncApiDocument())), JSON_TYPE);
  return asyncApiAsset;
}

function pageAsset(files: Map<string, Asset>): Asset {
  const src = (file: string): string => `docs/assets/${file}?v=${files.get(file)!.version}`;
  const title = "Print Shop API reference";
  // Relative URLs, so the page still works when the gateway is mounted under a path prefix.
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${src("swagger-ui.css")}">
</head>
<body>
<noscript>${title} needs JavaScript; the raw document is <a href="openapi.json">openapi.json</a>.</noscript>
<div id="swagger-ui" data-spec-url="openapi.json"></div>
<script src="${src("swagger-ui-bundle.js")}"></script>
<script src="${src("init.js")}"></script>
</body>
</html>
`;
  return asset(new TextEncoder().encode(html), HTML);
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => {
    const value = tag.trim();
    return value === "*" || value.replace(/^W\//, "") === etag;
  });
}

function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  return header.split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";").map((p) => p.trim());
    const q = params.find((p) => p.startsWith("q="));
    return coding === "gzip" && (q === undefined || Number(q.slice(2)) > 0);
  });
}

function send(served: Asset, request: Headers, headers: Record<string, string>): Response {
  const gzip = served.body.byteLength >= GZIP_MIN_BYTES &&
    acceptsGzip(request.get("accept-encoding"));
  const body = gzip ? (served.gzipped ??= new Uint8Array(gzipSync(served.body))) : served.body;
  // Each encoding is its own representation, so each gets its own strong ETag.
  const etag = gzip ? `"${served.hash}-gzip"` : `"${served.hash}"`;
  const common: Record<string, string> = {
    ETag: etag,
    Vary: "Accept-Encoding",
    "X-Content-Type-Options": "nosniff",
    ...headers,
  };
  if (matchesEtag(request.get("if-none-match") ?? undefined, etag)) {
    return new Response(null, { status: 304, headers: common });
  }
  return new Response(body, {
    status: 200,
    headers: {
      ...common,
      "Content-Type": served.contentType,
      // Explicit, so a HEAD answer (same headers, no body) still tells the size.
      "Content-Length": String(body.byteLength),
      ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    },
  });
}

/**
 * Public API docs: `GET /openapi.json` (the generated document), `GET /docs` (Swagger UI) and
 * `GET /asyncapi.json` (topics and event payloads, generated from the event catalogue).
 * The renderer is served from the installed npm package, so the page needs no CDN; neither
 * endpoint needs a credential.
 */
export function docsRoutes(): Hono {
  checkAssets();
  // The page names each file by its content's hash, so it is built with them, on first demand.
  let page: Asset | undefined;
  const app = new Hono();

  // Where someone who types the gateway's address in lands: where everything is.
  app.get("/", (c) =>
    c.json(
      envelope(
        {
          docs: "/docs",
          openapi: "/openapi.json",
          asyncapi: "/asyncapi.json",
          health: "/healthz",
          api: "/v1",
        },
        "Print Shop API: the reference is at /docs; every operation is under /v1 with an X-API-Key",
      ),
    ));

  app.get("/openapi.json", (c) => {
    return send(openApiAsset(), c.req.raw.headers, { "Cache-Control": REVALIDATE });
  });

  app.get("/asyncapi.json", (c) => {
    return send(eventsAsset(), c.req.raw.headers, { "Cache-Control": REVALIDATE });
  });

  app.get("/docs", (c) => {
    page ??= pageAsset(loadAssets());
    return send(page, c.req.raw.headers, {
      "Cache-Control": REVALIDATE,
      "Content-Security-Policy": CSP,
      "Referrer-Policy": "no-referrer",
    });
  });

  app.get("/docs/assets/:file", (c) => {
    const served = loadAssets().get(c.req.param("file"));
    if (!served) return c.json(errorBody("route_not_found", "No such docs asset"), 404);
    // Only the versioned URL the page links to may be cached forever; a stale or missing version
    // would otherwise pin whatever content it first got.
    const cache = c.req.query("v") === served.version ? IMMUTABLE : REVALIDATE;
    return send(served, c.req.raw.headers, { "Cache-Control": cache });
  });

  return app;
}
