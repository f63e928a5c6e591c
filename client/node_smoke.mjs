// Run by node_package_test.ts with Node, in a scratch folder where the packed tarball was
// installed with npm: what a Node integrator does first. Prints one JSON line of what it saw.
// GATEWAY_URL and API_KEY name a running stack and a key of one of its organisations.
import { Webhook } from "standardwebhooks";
import {
  createPrintShopClient,
  pagination,
  unwrap,
  verifyWebhook,
  WebhookVerificationError,
} from "@printshop/client";

const result = {};

// A delivery signed by the reference library, as the webhooks service signs (whsec_ secret).
const secret = "whsec_" + Buffer.from("node-smoke-test-secret-32-bytes!").toString("base64");
const body = JSON.stringify({
  type: "quote.created",
  timestamp: new Date().toISOString(),
  data: { id: "0193a1b2-4c5d-7e6f-8a90-1b2c3d4e5f60" },
});
const id = "0193a1b2-e0d1-7c2b-9a08-1f2e3d4c5b6a";
const headers = {
  "webhook-id": id,
  "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
  "webhook-signature": new Webhook(secret).sign(id, new Date(), body),
};
// Node hands a raw body over as a Buffer, and headers as a plain object.
result.verifiedType = verifyWebhook(secret, headers, Buffer.from(body)).type;
try {
  verifyWebhook(secret, headers, body.replace("quote.created", "quote.deleted"));
  result.tamperedRefused = false;
} catch (error) {
  result.tamperedRefused = error instanceof WebhookVerificationError;
}

// A list through a real gateway, across pages.
const paths = [];
const client = createPrintShopClient({
  baseUrl: process.env.GATEWAY_URL,
  apiKey: process.env.API_KEY,
  fetch: (request) => {
    paths.push(new URL(request.url).pathname + new URL(request.url).search);
    return fetch(request);
  },
});
for (const reference of ["N-1", "N-2", "N-3"]) {
  unwrap(await client.POST("/v1/quotes", { body: { reference } }));
}
result.references = [];
for await (
  const quote of client.paginate("/v1/quotes", {
    query: { limit: "2", sortField: "reference", sortDirection: "asc" },
  })
) {
  result.references.push(quote.reference);
}
result.listRequests = paths.filter((p) => p.startsWith("/v1/quotes?")).length;
result.quotesPaging = pagination["/v1/quotes"].style;

console.log(JSON.stringify(result));
