/**
 * `deno task receive`: a local endpoint for trying webhooks. Listens on RECEIVER_PORT (9000),
 * verifies every delivery with the Standard Webhooks reference library against WEBHOOK_SECRET,
 * and prints one JSON line per delivery: verified payloads, or why one was refused (401).
 */
import { Webhook } from "standardwebhooks";

const secret = Deno.env.get("WEBHOOK_SECRET");
if (!secret?.startsWith("whsec_")) {
  console.error("Set WEBHOOK_SECRET to the whsec_… secret the subscription returned");
  Deno.exit(1);
}
const verifier = new Webhook(secret);
const port = Number(Deno.env.get("RECEIVER_PORT") ?? 9000);

Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: () => console.error(`[receive] listening on http://127.0.0.1:${port}/`),
}, async (req) => {
  const body = await req.text();
  try {
    const payload = verifier.verify(body, Object.fromEntries(req.headers));
    console.log(JSON.stringify({ verified: true, id: req.headers.get("webhook-id"), payload }));
    return new Response(null, { status: 204 });
  } catch (error) {
    console.log(JSON.stringify({ verified: false, reason: String(error) }));
    return new Response(null, { status: 401 });
  }
});
