/**
 * The README's first session with the TypeScript client: price a quote tree without storing it,
 * store the same tree, and receive its `quote.created` with a verified signature.
 *
 *   KEY=<api key> deno run -A client/examples/first_session.ts
 *
 * The gateway is the running stack's (DATA_DIR/stack.json) unless API is set; the receiver
 * listens on RECEIVER_PORT (9000). Start the platform with WEBHOOK_ALLOW_PRIVATE_TARGETS=true.
 */
import { createPrintShopClient, unwrap, verifyWebhook } from "@printshop/client";

const dataDir = Deno.env.get("DATA_DIR") ?? ".data";
const api = Deno.env.get("API") ??
  JSON.parse(await Deno.readTextFile(`${dataDir}/stack.json`)).gatewayUrl;
const port = Number(Deno.env.get("RECEIVER_PORT") ?? 9000);
const client = createPrintShopClient({ baseUrl: api, apiKey: Deno.env.get("KEY")! });
console.log("organisation:", unwrap(await client.GET("/v1/me")).data.organization.name);

// Subscribe, and receive on RECEIVER_PORT, checking every delivery's signature.
const hook = unwrap(
  await client.POST("/v1/webhooks", {
    body: { url: `http://127.0.0.1:${port}/`, event: "quote.created" },
  }),
).data;
const { promise: delivered, resolve } = Promise.withResolvers<string>();
const receiver = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, async (req) => {
  const event = verifyWebhook(hook.secret!, req.headers, await req.text()); // throws if forged
  resolve(event.type);
  return new Response(null, { status: 204 });
});

// One group: a garment line in two sizes and a screen print, priced first without storing it.
const variants = [
  {
    size: "M",
    colour: "Black",
    quantity: 10,
    buyPrice: 5,
    extraCost: 0.5,
    markupType: "percentage",
    markupValue: 40,
  },
  { size: "L", colour: "Black", quantity: 5, buyPrice: 5, markupType: "fixed", markupValue: 3 },
] as const;
const line = { lineType: "Garment", productName: "Heavy tee" } as const;
const print = {
  method: "ScreenPrinting",
  position: "Front",
  quantity: 15,
  unitCost: 1.2,
  markupType: "percentage",
  markupValue: 50,
} as const;
const preview = unwrap(
  await client.POST("/v1/quotes/preview", {
    body: {
      groups: [{
        name: "Team tees",
        lines: [{ ...line, variants: [...variants] }],
        decorations: [print],
      }],
    },
  }),
).data;
console.log("previewed:", preview.totalIncGst);

// The same tree stored. `externalId` is your own order number: sent again, the create is a 409
// naming this quote, so a retried sync never makes two.
const externalId = `shop-order-${crypto.randomUUID()}`;
const quote = unwrap(
  await client.POST("/v1/quotes", { body: { reference: "PO-1001", externalId } }),
).data;
const group = unwrap(
  await client.POST("/v1/quotes/{quoteId}/groups", {
    params: { path: { quoteId: quote.id } },
    body: { name: "Team tees" },
  }),
).data;
const { id: lineId } = unwrap(
  await client.POST("/v1/quote-groups/{groupId}/lines", {
    params: { path: { groupId: group.id } },
    body: line,
  }),
).data;
for (const variant of variants) {
  unwrap(
    await client.POST("/v1/quote-lines/{lineId}/variants", {
      params: { path: { lineId } },
      body: variant,
    }),
  );
}
unwrap(
  await client.POST("/v1/quote-groups/{groupId}/decorations", {
    params: { path: { groupId: group.id } },
    body: print,
  }),
);
const stored =
  unwrap(await client.GET("/v1/quotes/{quoteId}", { params: { path: { quoteId: quote.id } } }))
    .data;
console.log("stored:", stored.totalIncGst); // 158.4: 77 + 40 + 27 ex GST, plus 10 % GST

// A retried sync: the create is refused, and names the quote it made (or find it by its id).
const again = await client.POST("/v1/quotes", { body: { reference: "PO-1001", externalId } });
console.log("sent again:", again.response.status, again.error?.details?.[0]?.message);
const found = unwrap(await client.GET("/v1/quotes", { params: { query: { externalId } } })).data;
console.log("found by externalId:", found.items[0]?.id === quote.id);

console.log("verified:", await delivered);
await receiver.shutdown();
