import assert from "node:assert/strict";
import { artefactDir, launchBrowser } from "@printshop/shared/testing/browser";

const MOBILE_WIDTH = 390;
const SCREENSHOT_NAME = "browser_test_order_received.png";

/** A server-rendered page with a plain form (no script): only a real submit can reach `/order`. */
function formServer(): { server: Deno.HttpServer<Deno.NetAddr>; received: URLSearchParams[] } {
  const received: URLSearchParams[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const { pathname } = new URL(req.url);
    if (req.method === "POST" && pathname === "/order") {
      const form = new URLSearchParams(await req.text());
      received.push(form);
      return html(`<h1 id="answer">Order received for ${escapeHtml(form.get("name") ?? "")}</h1>`);
    }
    await req.body?.cancel();
    if (pathname !== "/") return new Response("Not found", { status: 404 });
    return html(`<h1>New order</h1>
<form method="post" action="/order">
  <label>Name <input name="name" required></label>
  <button type="submit">Send order</button>
</form>`);
  });
  return { server, received };
}

function html(body: string): Response {
  return new Response(
    `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Print shop</title></head><body>${body}</body></html>`,
    { headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Width in pixels from a PNG's IHDR chunk, which always comes first after the signature. */
function pngWidth(bytes: Uint8Array): number {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  assert.deepEqual([...bytes.subarray(0, 8)], signature, "not a PNG");
  assert.equal(new TextDecoder().decode(bytes.subarray(12, 16)), "IHDR");
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(16);
}

Deno.test("launchBrowser submits a server-rendered form at 390 px and keeps a screenshot", async () => {
  const { server, received } = formServer();
  const screenshot = `${await artefactDir()}/${SCREENSHOT_NAME}`;
  // A screenshot from an earlier run must not make this one pass.
  await Deno.remove(screenshot).catch(() => {});
  try {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ width: MOBILE_WIDTH, height: 844 });
      await page.goto(`http://127.0.0.1:${server.addr.port}/`);
      const name = `Ada ${crypto.randomUUID().slice(0, 8)}`;
      await page.getByLabel("Name").fill(name);
      await page.getByRole("button", { name: "Send order" }).click();
      await page.waitForURL(/\/order$/);

      assert.equal(await page.locator("#answer").textContent(), `Order received for ${name}`);
      assert.equal(received.length, 1, "the server got one form submission");
      assert.equal(received[0]?.get("name"), name);

      await page.screenshot({ path: screenshot });
    } finally {
      await browser.close();
    }
  } finally {
    await server.shutdown();
  }
  const bytes = await Deno.readFile(screenshot);
  assert.ok(bytes.length > 0, `${screenshot} is empty`);
  assert.equal(pngWidth(bytes), MOBILE_WIDTH);
});
