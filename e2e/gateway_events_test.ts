/**
 * The gateway's platform events (which no integrator receives; the webhooks service acts on
 * them) are exactly what its admin operations emit.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { declaredBy, emittedBy, startTestStack, type TestStack } from "@printshop/shared/testing";

Deno.test("every gateway event is emitted by an admin operation, and nothing else is", async () => {
  await using stack: TestStack = await startTestStack();
  const shop = await stack.tenant();
  await stack.admin("DELETE", `/admin/api-keys/${shop.keyId}`);
  const partner = await stack.admin<{ data: { id: string } }>("POST", "/admin/partner-apps", {
    name: "Catalogue Connector",
    scopes: ["quotes.read"],
  });
  await stack.admin("POST", `/admin/partner-apps/${partner.data.id}/grants`, {
    organizationId: shop.organizationId,
    scopes: ["quotes.read"],
  });

  assertEquals(await emittedBy(stack, "gateway"), declaredBy("gateway"));
});
