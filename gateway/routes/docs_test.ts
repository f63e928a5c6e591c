import assert from "node:assert/strict";
import { docsRoutes } from "./docs.ts";

/** Script and stylesheet URLs of the page, resolved the way a browser at /docs would. */
function linkedAssets(html: string): string[] {
  const urls = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)]
    .map((m) => m[1]!)
    .filter((url) => !url.startsWith("data:"));
  return urls.map((url) => {
    const resolved = new URL(url, "http://gateway.test/docs");
    return resolved.pathname + resolved.search;
  });
}

Deno.test("docsRoutes() serves the OpenAPI document as JSON at /openapi.json", async () => {
  const res = await docsRoutes().request("/openapi.json");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(res.headers.get("cache-control"), "no-cache");
  const doc = await res.json();
  assert.equal(doc.openapi, "3.1.0");
  assert.equal(doc.info.title, "Print Shop API");
  assert.ok(doc.paths["/v1/quotes"]);
});

Deno.test("docsRoutes() answers 304 to a revalidation with the current ETag", async () => {
  const app = docsRoutes();
  const first = await app.request("/openapi.json");
  const etag = first.headers.get("etag");
  assert.ok(etag);
  await first.body?.cancel();
  const again = await app.request("/openapi.json", { headers: { "If-None-Match": etag } });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), "");
});

Deno.test("docsRoutes() renders /docs as HTML that loads the renderer from this server", async () => {
  const res = await docsRoutes().request("/docs");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  const csp = res.headers.get("content-security-policy") ?? "";
  assert.match(csp, /script-src 'self'/);
  const html = await res.text();
  assert.match(html, /<div id="swagger-ui" data-spec-url="openapi.json">/);
  assert.doesNotMatch(html, /https?:\/\//, "nothing is loaded from another origin");
  assert.doesNotMatch(html, /<script>/, "no inline script, so the CSP can forbid them");
  const assets = linkedAssets(html);
  assert.ok(assets.some((a) => a.startsWith("/docs/assets/swagger-ui-bundle.js?v=")), `${assets}`);
  assert.ok(assets.some((a) => a.startsWith("/docs/assets/swagger-ui.css?v=")), `${assets}`);
  assert.ok(assets.some((a) => a.startsWith("/docs/assets/init.js?v=")), `${assets}`);
});

Deno.test("docsRoutes() serves every asset the page links to, the bundle as JavaScript", async () => {
  const app = docsRoutes();
  const html = await (await app.request("/docs")).text();
  for (const url of linkedAssets(html)) {
    const res = await app.request(url);
    assert.equal(res.status, 200, url);
    assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable", url);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    const body = await res.text();
    if (url.includes(".js")) {
      assert.match(res.headers.get("content-type") ?? "", /^text\/javascript/);
    }
    if (url.includes("swagger-ui-bundle.js")) {
      assert.ok(body.length > 500_000, `bundle is only ${body.length} characters`);
      assert.match(body, /SwaggerUIBundle/);
    }
  }
});

Deno.test("docsRoutes() does not pin an unversioned asset URL and refuses unknown files", async () => {
  const app = docsRoutes();
  const unversioned = await app.request("/docs/assets/swagger-ui-bundle.js");
  assert.equal(unversioned.status, 200);
  assert.equal(unversioned.headers.get("cache-control"), "no-cache");
  await unversioned.body?.cancel();
  for (const path of ["/docs/assets/package.json", "/docs/assets/..%2Fpackage.json"]) {
    const res = await app.request(path);
    assert.equal(res.status, 404, path);
    assert.equal((await res.json()).error, "route_not_found");
  }
});

Deno.test("docsRoutes() gzips the bundle for clients that accept it", async () => {
  const app = docsRoutes();
  const plain = await app.request("/docs/assets/swagger-ui-bundle.js");
  const plainBytes = new Uint8Array(await plain.arrayBuffer());
  const zipped = await app.request("/docs/assets/swagger-ui-bundle.js", {
    headers: { "Accept-Encoding": "gzip, br" },
  });
  assert.equal(zipped.headers.get("content-encoding"), "gzip");
  assert.equal(zipped.headers.get("vary"), "Accept-Encoding");
  assert.notEqual(zipped.headers.get("etag"), plain.headers.get("etag"));
  const unzipped = zipped.body!.pipeThrough(new DecompressionStream("gzip"));
  const bytes = new Uint8Array(await new Response(unzipped).arrayBuffer());
  assert.ok(Number(zipped.headers.get("content-length")) < plainBytes.byteLength / 2);
  assert.deepEqual(bytes, plainBytes);
  const refused = await app.request("/docs/assets/swagger-ui-bundle.js", {
    headers: { "Accept-Encoding": "gzip;q=0" },
  });
  assert.equal(refused.headers.get("content-encoding"), null);
  await refused.body?.cancel();
});

Deno.test("docsRoutes() answers GET / with where the reference, documents and health are", async () => {
  const res = await docsRoutes().request("/");
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.status, true);
  assert.equal(body.data.docs, "/docs");
  assert.equal(body.data.openapi, "/openapi.json");
  assert.match(body.message, /\/docs/);
});

Deno.test("docsRoutes() refuses at start, naming the directory, when the renderer cannot be read", async () => {
  // The files are read on the first visit only, so a process that may not read them must still
  // fail when it starts, as it did when they were read then, not on someone's first visit.
  const script = `
    import { docsRoutes } from ${JSON.stringify(new URL("./docs.ts", import.meta.url).href)};
    try {
      docsRoutes();
      console.log("started");
    } catch (error) {
      console.log(error instanceof Error ? error.message : String(error));
    }
  `;
  const child = new Deno.Command(Deno.execPath(), {
    // No --allow-read: importing modules needs none, reading the package's files does.
    args: ["run", "--no-prompt", "--node-modules-dir=manual", "--allow-env", "-"],
    cwd: new URL("../../", import.meta.url).pathname,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  const { stdout, stderr } = await child.output();
  const said = new TextDecoder().decode(stdout);
  assert.match(
    said,
    /^\/docs needs read access to .*swagger-ui-dist.* and could not read swagger-ui-bundle\.js/,
    new TextDecoder().decode(stderr),
  );
});
