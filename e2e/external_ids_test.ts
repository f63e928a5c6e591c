/**
 * External ids through the real gateway, as a sync would use them: for each kind of row that
 * takes one (quotes, customers, vendors, catalogue items, garment variants), a create names it,
 * a retried create is a 409 naming the row it made (message and details), a PATCH onto another
 * row's id is refused the same way, the list filter finds it, the event carries it, another
 * organisation may use the same id, and two creates racing for one id make one row.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { eventually } from "./_webhooks.ts";

type Json = Record<string, unknown>;

interface Kind {
  noun: string;
  /** POST path, and the list (same path) the filter is tried on. */
  path: string;
  /** PATCH path of a row. */
  row: (id: string) => string;
  body: (n: number) => Promise<Json> | Json;
  created: string;
}

async function send(
  stack: TestStack,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json }> {
  const res = await stack.call(key, method, path, body);
  return { status: res.status, json: await res.json() as Json };
}

async function ok(stack: TestStack, key: string, method: string, path: string, body?: unknown) {
  const answer = await send(stack, key, method, path, body);
  assert(answer.status < 300, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.json)}`);
  return answer.json.data as Json;
}

Deno.test("every kind with an externalId: one row per id, a retry names it, other shops free", async () => {
  await using stack = await startTestStack();
  const a = await stack.tenant();
  const b = await stack.tenant();
  const item = async (key: string, code: string): Promise<string> =>
    (await ok(stack, key, "POST", "/v1/catalogue", { styleCode: code, name: code })).id as string;
  const itemOf = {
    [a.apiKey]: await item(a.apiKey, "TEE"),
    [b.apiKey]: await item(b.apiKey, "TEE"),
  };
  let sizes = 0;
  const kinds: Kind[] = [
    {
      noun: "quote",
      path: "/v1/quotes",
      row: (id) => `/v1/quotes/${id}`,
      body: () => ({ reference: "Storefront order" }),
      created: "quote.created",
    },
    {
      noun: "customer",
      path: "/v1/customers",
      row: (id) => `/v1/customers/${id}`,
      body: (n) => ({ companyName: `Club ${n}` }),
      created: "customer.created",
    },
    {
      noun: "vendor",
      path: "/v1/vendors",
      row: (id) => `/v1/vendors/${id}`,
      body: (n) => ({ name: `Mill ${n}`, kind: "InventorySupplier" }),
      created: "vendor.created",
    },
    {
      noun: "catalogue item",
      path: "/v1/catalogue",
      row: (id) => `/v1/catalogue/${id}`,
      body: (n) => ({ styleCode: `STYLE-${n}`, name: `Style ${n}` }),
      created: "garment_catalogue_item.created",
    },
    {
      noun: "garment variant",
      path: "/v1/garment-variants",
      row: (id) => `/v1/garment-variants/${id}`,
      body: () => ({ color: "Black", size: `S${++sizes}` }),
      created: "garment_variant.created",
    },
  ];
  for (const kind of kinds) {
    const bodyFor = async (key: string, n: number): Promise<Json> => ({
      ...await kind.body(n),
      ...(kind.noun === "garment variant" ? { garmentCatalogueItemId: itemOf[key] } : {}),
    });
    const external = `sync-${kind.noun.replaceAll(" ", "-")}-1`;
    const first = await ok(stack, a.apiKey, "POST", kind.path, {
      ...await bodyFor(a.apiKey, 1),
      externalId: external,
    });
    assertEquals(first.externalId, external, kind.noun);

    // A retried create (a webhook delivered twice) makes nothing and names the row.
    const again = await send(stack, a.apiKey, "POST", kind.path, {
      ...await bodyFor(a.apiKey, 2),
      externalId: external,
    });
    assertEquals(again.status, 409, `${kind.noun}: ${JSON.stringify(again.json)}`);
    assertEquals(again.json.error, "conflict");
    assert(String(again.json.message).includes(first.id as string), String(again.json.message));
    assertEquals(again.json.details, [{
      path: "externalId",
      message: `Already taken by ${kind.noun} ${first.id}`,
    }]);

    // The list filter finds exactly it.
    const listed = await ok(
      stack,
      a.apiKey,
      "GET",
      `${kind.path}?externalId=${encodeURIComponent(external)}`,
    );
    assertEquals((listed.items as Json[]).map((r) => r.id), [first.id], kind.noun);
    // A raw id with spaces around it finds what was written trimmed.
    const padded = await ok(
      stack,
      a.apiKey,
      "GET",
      `${kind.path}?externalId=${encodeURIComponent(` ${external} `)}`,
    );
    assertEquals((padded.items as Json[]).map((r) => r.id), [first.id], kind.noun);

    // A PATCH onto it from another row is refused alike; onto its own row it changes nothing.
    const second = await ok(stack, a.apiKey, "POST", kind.path, {
      ...await bodyFor(a.apiKey, 3),
      externalId: `${external}-b`,
    });
    const patched = await send(stack, a.apiKey, "PATCH", kind.row(second.id as string), {
      externalId: external,
    });
    assertEquals(patched.status, 409, `${kind.noun}: ${JSON.stringify(patched.json)}`);
    assertEquals(patched.json.details, [{
      path: "externalId",
      message: `Already taken by ${kind.noun} ${first.id}`,
    }]);
    await ok(stack, a.apiKey, "PATCH", kind.row(first.id as string), { externalId: external });
    // Freed by a change, it may be taken by another row.
    await ok(stack, a.apiKey, "PATCH", kind.row(second.id as string), { externalId: null });
    const freed = `${external}-b`;
    const third = await ok(stack, a.apiKey, "POST", kind.path, {
      ...await bodyFor(a.apiKey, 4),
      externalId: freed,
    });
    assertEquals(third.externalId, freed);

    // Another organisation may use the same id; its filter finds only its own row.
    const theirs = await ok(stack, b.apiKey, "POST", kind.path, {
      ...await bodyFor(b.apiKey, 1),
      externalId: external,
    });
    const theirList = await ok(
      stack,
      b.apiKey,
      "GET",
      `${kind.path}?externalId=${encodeURIComponent(external)}`,
    );
    assertEquals((theirList.items as Json[]).map((r) => r.id), [theirs.id]);

    // Too long is a 400 naming the field.
    const long = await send(stack, a.apiKey, "POST", kind.path, {
      ...await bodyFor(a.apiKey, 5),
      externalId: "x".repeat(201),
    });
    assertEquals(long.status, 400);
    assertEquals((long.json.details as Json[])[0]!.path, "externalId");

    // Two creates racing for one id: one row, and the other answer names it.
    const raced = `race-${kind.noun.replaceAll(" ", "-")}`;
    const answers = await Promise.all(
      [6, 7].map(async (n) =>
        send(stack, a.apiKey, "POST", kind.path, {
          ...await bodyFor(a.apiKey, n),
          externalId: raced,
        })
      ),
    );
    const winners = answers.filter((r) => r.status === 201);
    const losers = answers.filter((r) => r.status === 409);
    assertEquals([winners.length, losers.length], [1, 1], JSON.stringify(answers));
    const winner = (winners[0]!.json.data as Json).id as string;
    assertEquals(losers[0]!.json.details, [{
      path: "externalId",
      message: `Already taken by ${kind.noun} ${winner}`,
    }]);

    // The event carries it.
    await eventually(`${kind.created} with its externalId`, async () => {
      const log = await ok(stack, a.apiKey, "GET", "/v1/event-log?limit=200");
      const event = (log.items as Json[]).find((e) =>
        e.type === kind.created && e.aggregateId === first.id
      );
      return event && (event.data as Json).externalId === external ? event : undefined;
    }, 15_000);
  }
});

Deno.test("a bulk create of variants lists each row whose externalId is taken or repeated", async () => {
  await using stack = await startTestStack();
  const a = await stack.tenant();
  const itemId = (await ok(stack, a.apiKey, "POST", "/v1/catalogue", {
    styleCode: "TEE",
    name: "Tee",
  })).id as string;
  const held = await ok(stack, a.apiKey, "POST", "/v1/garment-variants", {
    garmentCatalogueItemId: itemId,
    color: "Black",
    size: "S",
    externalId: "held",
  });
  const answer = await send(stack, a.apiKey, "POST", "/v1/garment-variants/bulk/create", {
    input: [
      { garmentCatalogueItemId: itemId, color: "Black", size: "M", externalId: "held" },
      { garmentCatalogueItemId: itemId, color: "Black", size: "L", externalId: "new" },
      { garmentCatalogueItemId: itemId, color: "Black", size: "XL", externalId: "new" },
    ],
  });
  assertEquals(answer.status, 400, JSON.stringify(answer.json));
  assertEquals(answer.json.details, [
    { path: "input.0.externalId", message: `Already taken by garment variant ${held.id}` },
    { path: "input.2.externalId", message: "Repeats row 1's externalId" },
  ]);
  const listed = await ok(
    stack,
    a.apiKey,
    "GET",
    `/v1/garment-variants?garmentCatalogueItemId=${itemId}`,
  );
  assertEquals((listed.items as Json[]).length, 1, "nothing written");
});
