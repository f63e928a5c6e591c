/**
 * The catalogue service through the real gateway, as a new integrator would use it: a style with
 * 30 variants in one call, the catalogue paged with a cursor while another key writes to it,
 * stock adjusted concurrently with a ledger that explains the figure, other organisations kept
 * out (and free to choose the same ids), buy prices only for costs.read, and a signed webhook
 * for a stock change.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  startTestStack,
  startWebhookReceiver,
  type TestStack,
  type WebhookReceiver,
} from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { GarmentVariant } from "@printshop/shared/contracts/catalogue";
import { sleep } from "@printshop/shared/net";
import { eventually, verify } from "./_webhooks.ts";

type Json = Record<string, unknown>;
interface Page {
  items: Json[];
  nextCursor: string | null;
}

/** A cursor's parts are base64url, as any client could decode and re-encode them. */
const fromBase64Url = (text: string): string =>
  atob(text.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat((4 - text.length % 4) % 4));
const toBase64Url = (text: string): string =>
  btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

const COLOURS = [
  ["Black", "#1B1B1B"],
  ["White", "#FFFFFF"],
  ["Navy", "#1F2A44"],
  ["Red", "#C8102E"],
  ["Sport Grey", "#9EA2A2"],
] as const;
// Not in size order, so "in request order" cannot pass by the list's own sort.
const SIZES = ["2XL", "XS", "L", "S", "XL", "M"] as const;

Deno.test("the catalogue through the gateway", async (t) => {
  await using stack: TestStack = await startTestStack();
  const a = await stack.tenant(ALL_SCOPES, "Shop A");
  const b = await stack.tenant(ALL_SCOPES, "Shop B");
  const keyOf = async (organizationId: string, scopes: readonly string[]): Promise<string> =>
    (await stack.admin<{ data: { apiKey: string } }>(
      "POST",
      `/admin/organizations/${organizationId}/api-keys`,
      { scopes },
    )).data.apiKey;
  // A second and third client of organisation A, and one that may not see costs.
  const a2 = await keyOf(a.organizationId, ALL_SCOPES);
  const a3 = await keyOf(a.organizationId, ALL_SCOPES);
  const aNoCosts = await keyOf(a.organizationId, ALL_SCOPES.filter((s) => s !== "costs.read"));

  const call = async (
    key: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Json }> => {
    const res = await stack.call(key, method, path, body);
    return { status: res.status, json: await res.json() as Json };
  };
  /** The envelope's data, after checking the status. */
  const send = async <T = Json>(
    status: number,
    method: string,
    path: string,
    body?: unknown,
    key = a.apiKey,
  ): Promise<T> => {
    const answer = await call(key, method, path, body);
    assertEquals(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.json)}`);
    return answer.json.data as T;
  };
  /** The error envelope, after checking the status. */
  const refuse = async (
    status: number,
    method: string,
    path: string,
    body?: unknown,
    key = a.apiKey,
  ): Promise<Json> => {
    const answer = await call(key, method, path, body);
    assertEquals(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.json)}`);
    assertEquals(answer.json.status, false);
    return answer.json;
  };

  const item = await send(201, "POST", "/v1/catalogue", {
    styleCode: "5000",
    name: "Heavy Cotton Tee",
    brand: "Gildan",
    category: "T-shirts",
    buyPrice: 3.85,
  });
  assertEquals(item.buyPrice, 3.85);
  let variants: Json[] = [];

  await t.step("30 variants (5 colours × 6 sizes) in one bulk create", async () => {
    const input = COLOURS.flatMap(([color, colorHex], c) =>
      SIZES.map((size, s) => ({
        garmentCatalogueItemId: item.id,
        color,
        colorHex,
        size,
        stockCode: `G500-${c}-${size}`,
        countryOfManufacture: c % 2 === 0 ? "Honduras" : "Nicaragua",
        // The last colour keeps its stock by location: its stockOnHand is their sum.
        ...(c === 4
          ? {
            stockByLocation: [{ location: "Main", quantity: s + 1 }, {
              location: "Van",
              quantity: 2,
            }],
          }
          : { stockOnHand: 20 + c * 10 + s }),
      }))
    );
    assertEquals(input.length, 30);
    const res = await call(a.apiKey, "POST", "/v1/garment-variants/bulk/create", { input });
    assertEquals(res.status, 201, JSON.stringify(res.json));
    variants = res.json.data as Json[];
    assertEquals(variants.length, 30);
    const fields = Object.keys(GarmentVariant.shape).sort();
    variants.forEach((variant, index) => {
      const row = input[index]!;
      assertEquals(Object.keys(variant).sort(), fields, `row ${index} has every field`);
      assertEquals(
        [
          variant.garmentCatalogueItemId,
          variant.color,
          variant.size,
          variant.colorHex,
          variant.stockCode,
          variant.countryOfManufacture,
          variant.styleCode,
        ],
        [
          item.id,
          row.color,
          row.size,
          row.colorHex,
          row.stockCode,
          row.countryOfManufacture,
          "5000",
        ],
        `row ${index} in request order`,
      );
      if ("stockByLocation" in row) {
        assertEquals(variant.stockByLocation, row.stockByLocation);
        assertEquals(variant.stockOnHand, row.stockByLocation[0]!.quantity + 2);
      } else {
        assertEquals([variant.stockOnHand, variant.stockByLocation], [row.stockOnHand, []]);
      }
    });
    assertEquals(new Set(variants.map((v) => v.id)).size, 30, "30 distinct variants");
    // They are stored: the list of the item's variants holds exactly these.
    const listed = await send<{ items: Json[]; totalCount: number }>(
      200,
      "GET",
      `/v1/garment-variants?garmentCatalogueItemId=${item.id}&limit=100`,
    );
    assertEquals(listed.totalCount, 30);
    assertEquals(
      listed.items.map((v) => v.id).sort(),
      variants.map((v) => v.id).sort(),
    );
    // Opening stock is in the ledger.
    const ledger = await send<{ items: Json[] }>(
      200,
      "GET",
      `/v1/garment-variants/${variants[0]!.id}/stock-adjustments`,
    );
    assertEquals(
      ledger.items.map((r) => [r.delta, r.reason, r.stockOnHandAfter]),
      [[20, "opening", 20]],
    );
  });

  const itemsOfA = new Set<string>([item.id as string]);
  const itemsOfB = new Set<string>();
  let cursorOfA = "";

  /**
   * Walks the whole catalogue with `order` (4 rows a page) while key a2 inserts rows before,
   * among and after the ones being paged, as a concurrent loop until the walk is done (at most
   * 45 rows). Answers what the walk saw and what existed before it started.
   */
  const walkWhileInserting = async (
    order: string,
    tag: string,
  ): Promise<{ seen: Json[]; existing: Set<string> }> => {
    const existing = new Set(itemsOfA);
    let paging = true;
    let insertedWhilePaging = 0;
    const inserter = (async () => {
      for (let i = 0; paging && i < 45; i++) {
        const prefix = ["A", "M", "Z"][i % 3]!;
        const row = await send(
          201,
          "POST",
          "/v1/catalogue",
          { styleCode: `${prefix}${String(i).padStart(3, "0")}${tag}`, name: `New ${i}` },
          a2,
        );
        itemsOfA.add(row.id as string);
        if (paging) insertedWhilePaging++;
      }
    })();
    const seen: Json[] = [];
    let cursor: string | null = null;
    let pages = 0;
    try {
      do {
        const query: string = `limit=4${order}${cursor ? `&cursor=${cursor}` : ""}`;
        const page: Page = await send<Page>(200, "GET", `/v1/catalogue?${query}`);
        assert(page.items.length <= 4, "a page holds at most limit rows");
        seen.push(...page.items);
        cursor = page.nextCursor;
        if (cursor && !cursorOfA) cursorOfA = `limit=4${order}&cursor=${cursor}`;
        pages++;
        // Let the inserter get a row in between pages.
        await sleep(15);
      } while (cursor !== null);
    } finally {
      paging = false;
      await inserter;
    }
    assert(insertedWhilePaging >= 3, `rows were inserted while paging (${insertedWhilePaging})`);
    assert(pages >= 8, `paged in several pages (${pages})`);
    const ids = seen.map((row) => row.id as string);
    assertEquals(new Set(ids).size, ids.length, "no row twice");
    for (const id of existing) assert(ids.includes(id), `row ${id} that existed before was seen`);
    for (const id of ids) assert(itemsOfA.has(id), `row ${id} is one of A's`);
    return { seen, existing };
  };

  await t.step("paging with a cursor while another client inserts: every row once", async () => {
    // Rows that exist before paging starts, with style codes the inserts will fall between.
    const before = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        send(201, "POST", "/v1/catalogue", {
          styleCode: `M${String(i).padStart(3, "0")}`,
          name: `Style ${i}`,
          brand: i % 2 === 0 ? "Gildan" : "AS Colour",
        })),
    );
    for (const row of before) itemsOfA.add(row.id as string);
    // Organisation B has rows of the same style codes: none of them may show up.
    for (let i = 0; i < 3; i++) {
      const theirs = await send(
        201,
        "POST",
        "/v1/catalogue",
        { styleCode: `M${String(i).padStart(3, "0")}`, name: "B's", brand: "Gildan" },
        b.apiKey,
      );
      itemsOfB.add(theirs.id as string);
    }

    // The default order, oldest first: the new rows come after the cursor.
    const byAge = await walkWhileInserting("", "x");
    const created = byAge.seen.map((row) => Date.parse(row.createdAt as string));
    assertEquals(created, [...created].sort((x, y) => x - y), "oldest first");

    // By style code: new rows land before, among and after the rows still to come.
    const byCode = await walkWhileInserting("&sortField=styleCode", "y");
    const codes = byCode.seen.map((row) => row.styleCode as string);
    assertEquals(codes, [...codes].sort(), "in style code order");
  });

  await t.step("a tampered cursor, a changed filter or another organisation: 400", async () => {
    const first = await send<Page>(200, "GET", "/v1/catalogue?limit=2&brand=Gildan");
    const cursor = first.nextCursor!;
    assert(cursor, "a next page");
    // The same query continues.
    const next = await send<Page>(
      200,
      "GET",
      `/v1/catalogue?limit=2&brand=Gildan&cursor=${cursor}`,
    );
    assertEquals(next.items.length, 2);
    assert(!next.items.some((row) => first.items.some((r) => r.id === row.id)));

    // The payload rewritten to start elsewhere, signature kept.
    const [payload, signature] = cursor.split(".") as [string, string];
    const position = JSON.parse(fromBase64Url(payload)) as Json;
    assert(typeof position.i === "string", "the cursor holds the last row's id");
    const forged = toBase64Url(JSON.stringify({ ...position, i: crypto.randomUUID() }));
    // One character of the signature changed.
    const flipped = signature.at(-2) === "A" ? "B" : "A";
    const badSignature = `${payload}.${signature.slice(0, -2)}${flipped}${signature.slice(-1)}`;
    for (const tampered of [`${forged}.${signature}`, badSignature, "not-a-cursor"]) {
      const refused = await refuse(
        400,
        "GET",
        `/v1/catalogue?limit=2&brand=Gildan&cursor=${encodeURIComponent(tampered)}`,
      );
      assertEquals(refused.error, "validation_error");
      assertEquals((refused.details as Json[])[0]!.path, "cursor", JSON.stringify(refused));
    }

    for (const changed of ["brand=AS%20Colour", "brand=Gildan&sortField=name", "category=Tees"]) {
      const refused = await refuse(400, "GET", `/v1/catalogue?limit=2&${changed}&cursor=${cursor}`);
      assertEquals((refused.details as Json[])[0]!.path, "cursor", changed);
    }

    // Organisation B, with the very query A's cursor was issued for.
    const elsewhere = await refuse(
      400,
      "GET",
      `/v1/catalogue?limit=2&brand=Gildan&cursor=${cursor}`,
      undefined,
      b.apiKey,
    );
    assertEquals((elsewhere.details as Json[])[0]!.path, "cursor");
    const paged = await refuse(
      400,
      "GET",
      `/v1/catalogue?${cursorOfA}`,
      undefined,
      b.apiKey,
    );
    assertEquals(paged.error, "validation_error");
  });

  await t.step(
    "32 concurrent adjustments from three keys: exact stock, a ledger that adds up",
    async () => {
      const variant = variants[0]!;
      const path = `/v1/garment-variants/${variant.id}`;
      const opening = variant.stockOnHand as number;
      assertEquals(opening, 20);
      const keys = [a.apiKey, a2, a3];
      // 20 × +3 and 12 × −1: never below zero whatever order they run in.
      const deltas = Array.from({ length: 32 }, (_, i) => (i % 8 < 5 ? 3 : -1));
      const answers = await Promise.all(
        deltas.map((delta, i) =>
          call(keys[i % keys.length]!, "POST", `${path}/stock-adjustments`, {
            delta,
            reason: delta > 0 ? "received" : "used_in_production",
            reference: `JOB-${i}`,
          })
        ),
      );
      for (const answer of answers) assertEquals(answer.status, 201, JSON.stringify(answer.json));
      const made = answers.map((answer) => answer.json.data as Json);
      const expected = opening + deltas.reduce((sum, d) => sum + d, 0);
      assertEquals(expected, 20 + 60 - 12);

      const after = await send(200, "GET", path);
      assertEquals(after.stockOnHand, expected);

      // Serialised: each adjustment started from what another one (or the opening) left, once.
      const befores = made.map((m) => (m.stockOnHandAfter as number) - (m.delta as number));
      const afters = made.map((m) => m.stockOnHandAfter as number);
      const startsFrom = [opening, ...afters];
      startsFrom.splice(startsFrom.indexOf(expected), 1);
      assertEquals(befores.sort((x, y) => x - y), startsFrom.sort((x, y) => x - y));

      const ledger = await send<{ items: Json[]; totalCount: number }>(
        200,
        "GET",
        `${path}/stock-adjustments?limit=200`,
      );
      assertEquals(ledger.totalCount, 33);
      assertEquals(ledger.items.length, 33);
      assertEquals(ledger.items.reduce((sum, r) => sum + (r.delta as number), 0), expected);
      assertEquals(
        ledger.items.filter((r) => r.reason !== "opening").map((r) => r.id).sort(),
        made.map((m) => m.id).sort(),
      );
      // Who made each one is recorded: three credentials, as the keys were spread.
      const byCredential = new Map<string, number>();
      for (const m of made) {
        byCredential.set(
          m.credentialId as string,
          (byCredential.get(m.credentialId as string) ?? 0) + 1,
        );
      }
      assertEquals([...byCredential.values()].sort((x, y) => x - y), [10, 11, 11]);
    },
  );

  await t.step(
    "below zero is 409 and changes nothing, unless negative stock is allowed",
    async () => {
      const variant = variants[1]!;
      const path = `/v1/garment-variants/${variant.id}`;
      const stock = (await send(200, "GET", path)).stockOnHand as number;
      assertEquals(stock, 21);
      const ledgerBefore = await send<{ totalCount: number }>(
        200,
        "GET",
        `${path}/stock-adjustments`,
      );
      const refused = await refuse(409, "POST", `${path}/stock-adjustments`, {
        delta: -(stock + 1),
        reason: "shipped",
      });
      assertEquals(refused.error, "conflict");
      assertEquals((await send(200, "GET", path)).stockOnHand, stock);
      const ledgerAfter = await send<{ totalCount: number }>(
        200,
        "GET",
        `${path}/stock-adjustments`,
      );
      assertEquals(ledgerAfter.totalCount, ledgerBefore.totalCount, "no ledger row");

      const settings = await send(200, "PATCH", "/v1/catalogue-settings", {
        allowNegativeStock: true,
      });
      assertEquals(settings.allowNegativeStock, true);
      const allowed = await send(201, "POST", `${path}/stock-adjustments`, {
        delta: -(stock + 1),
        reason: "shipped",
      });
      assertEquals(allowed.stockOnHandAfter, -1);
      assertEquals((await send(200, "GET", path)).stockOnHand, -1);
      // Back to the default, and the rule holds again.
      await send(200, "PATCH", "/v1/catalogue-settings", { allowNegativeStock: false });
      await refuse(409, "POST", `${path}/stock-adjustments`, { delta: -1, reason: "shipped" });
      assertEquals((await send(200, "GET", path)).stockOnHand, -1);
    },
  );

  await t.step("organisation B cannot reach A's item or variants", async () => {
    const variant = variants[2]!;
    for (
      const [method, path, body] of [
        ["GET", `/v1/catalogue/${item.id}`, undefined],
        ["PATCH", `/v1/catalogue/${item.id}`, { name: "Taken over" }],
        ["DELETE", `/v1/catalogue/${item.id}?cascade=true`, undefined],
        ["GET", `/v1/garment-variants/${variant.id}`, undefined],
        ["PATCH", `/v1/garment-variants/${variant.id}`, { stockCode: "THEIRS" }],
        ["DELETE", `/v1/garment-variants/${variant.id}`, undefined],
        ["POST", `/v1/garment-variants/${variant.id}/stock-adjustments`, {
          delta: 5,
          reason: "received",
        }],
        ["GET", `/v1/garment-variants/${variant.id}/stock-adjustments`, undefined],
      ] as const
    ) {
      const refused = await refuse(404, method, path, body, b.apiKey);
      assertEquals(refused.error, "not_found", `${method} ${path}`);
    }
    const onTheirItem = await refuse(400, "POST", "/v1/garment-variants/bulk/create", {
      input: [{ garmentCatalogueItemId: item.id, color: "Pink", size: "M" }],
    }, b.apiKey);
    assertEquals(
      (onTheirItem.details as Json[]).map((d) => d.path),
      ["input.0.garmentCatalogueItemId"],
    );

    // B's own variants list, unfiltered and filtered by A's item, holds none of A's rows.
    const [bItem] = [...itemsOfB];
    await send(201, "POST", "/v1/garment-variants/bulk/create", {
      input: [{ garmentCatalogueItemId: bItem, color: "Black", size: "M", stockOnHand: 1 }],
    }, b.apiKey);
    const theirs = await send<{ items: Json[]; totalCount: number }>(
      200,
      "GET",
      "/v1/garment-variants?limit=200",
      undefined,
      b.apiKey,
    );
    assertEquals(theirs.totalCount, 1);
    assertEquals(theirs.items.map((v) => v.garmentCatalogueItemId), [bItem]);
    const filtered = await send<{ items: Json[]; totalCount: number }>(
      200,
      "GET",
      `/v1/garment-variants?garmentCatalogueItemId=${item.id}`,
      undefined,
      b.apiKey,
    );
    assertEquals([filtered.items, filtered.totalCount], [[], 0]);
    const theirCatalogue = await send<Page>(
      200,
      "GET",
      "/v1/catalogue?limit=200",
      undefined,
      b.apiKey,
    );
    assertEquals(theirCatalogue.items.map((i) => i.id).sort(), [...itemsOfB].sort());

    // A's rows are as they were.
    const mine = await send(200, "GET", `/v1/catalogue/${item.id}`);
    assertEquals(mine.name, "Heavy Cotton Tee");
    const still = await send(200, "GET", `/v1/garment-variants/${variant.id}`);
    assertEquals([still.stockCode, still.stockOnHand], [variant.stockCode, variant.stockOnHand]);
    assertEquals(
      (await send<{ totalCount: number }>(
        200,
        "GET",
        `/v1/garment-variants?garmentCatalogueItemId=${item.id}`,
      ))
        .totalCount,
      30,
    );
  });

  await t.step("a pre-built item id that A uses is B's own when B puts it", async () => {
    const id = crypto.randomUUID();
    const path = `/v1/prebuilt-items/${id}`;
    await send(201, "PUT", path, { name: "A's polo", garmentCatalogueItemId: item.id });
    // Answered as any new id is: nothing tells B that A holds this one.
    const theirs = await send(201, "PUT", path, { name: "B's polo" }, b.apiKey);
    assertEquals([theirs.id, theirs.name, theirs.garmentCatalogueItemId], [id, "B's polo", null]);
    assertEquals((await send(200, "GET", path)).name, "A's polo");
    assertEquals((await send(200, "GET", path, undefined, b.apiKey)).name, "B's polo");
    await send(200, "DELETE", path, undefined, b.apiKey);
    assertEquals((await send(200, "GET", path)).garmentCatalogueItemId, item.id);
    await send(200, "DELETE", path);
  });

  await t.step("buyPrice only for costs.read: answers, deliveries and the event log", async () => {
    await using withCosts: WebhookReceiver = await startWebhookReceiver();
    await using withoutCosts: WebhookReceiver = await startWebhookReceiver();
    const event = "garment_catalogue_item.updated";
    const full = await send(201, "POST", "/v1/webhooks", { url: withCosts.url, event });
    const blind = await send(
      201,
      "POST",
      "/v1/webhooks",
      { url: withoutCosts.url, event },
      aNoCosts,
    );
    assertEquals([full.includesCosts, blind.includesCosts], [true, false]);

    const hidden = await send(200, "GET", `/v1/catalogue/${item.id}`, undefined, aNoCosts);
    assertEquals("buyPrice" in hidden, false);
    assertEquals(hidden.styleCode, "5000");
    const listed = await send<Page>(200, "GET", "/v1/catalogue?limit=200", undefined, aNoCosts);
    assert(listed.items.length > 30);
    assert(listed.items.every((row) => !("buyPrice" in row)), "no buyPrice in the list");

    for (
      const [method, path] of [["PATCH", `/v1/catalogue/${item.id}`], [
        "POST",
        "/v1/catalogue",
      ]] as const
    ) {
      const refused = await refuse(
        403,
        method,
        path,
        { styleCode: "COST", name: "Cost", buyPrice: 1 },
        aNoCosts,
      );
      assertEquals(refused.error, "insufficient_scope");
    }
    const unchanged = await send(200, "GET", `/v1/catalogue/${item.id}`);
    assertEquals([unchanged.buyPrice, unchanged.styleCode], [3.85, "5000"]);
    assertEquals(
      (await send<Page>(200, "GET", "/v1/catalogue?limit=200&search=COST")).items,
      [],
      "the refused create wrote nothing",
    );

    const renamed = await send(200, "PATCH", `/v1/catalogue/${item.id}`, {
      name: "Heavy Cotton Tee (renamed)",
    }, aNoCosts);
    assertEquals("buyPrice" in renamed, false);

    const [costly] = await withCosts.waitFor(1, { timeoutMs: 10_000 });
    const [plain] = await withoutCosts.waitFor(1, { timeoutMs: 10_000 });
    const costlyData = verify(full.secret as string, costly!).data as Json;
    const plainData = verify(blind.secret as string, plain!).data as Json;
    assertEquals([costlyData.name, costlyData.buyPrice], ["Heavy Cotton Tee (renamed)", 3.85]);
    assertEquals(plainData.name, "Heavy Cotton Tee (renamed)");
    assertEquals("buyPrice" in plainData, false);

    const itemEvents = async (key: string): Promise<Json[]> => {
      const all: Json[] = [];
      for (let after = "";;) {
        const log = await send<{ items: Json[]; hasMore: boolean; lastEventId: string }>(
          200,
          "GET",
          `/v1/event-log?limit=200${after}`,
          undefined,
          key,
        );
        all.push(...log.items);
        if (!log.hasMore) break;
        after = `&after=${log.lastEventId}`;
      }
      return all.filter((e) =>
        String(e.type).startsWith("garment_catalogue_item.") && e.aggregateId === item.id
      );
    };
    const logged = await eventually("the item's events in the log", async () => {
      const events = await itemEvents(a.apiKey);
      return events.some((e) => e.type === event) ? events : undefined;
    }, 10_000);
    assertEquals(logged.map((e) => (e.data as Json).buyPrice), [3.85, 3.85]);
    const loggedBlind = await itemEvents(aNoCosts);
    assertEquals(loggedBlind.map((e) => e.type), ["garment_catalogue_item.created", event]);
    assert(loggedBlind.every((e) => !("buyPrice" in (e.data as Json))), "no buyPrice in the log");
  });

  await t.step("a stock adjustment delivers a signed garment_variant.stock_adjusted", async () => {
    await using receiver: WebhookReceiver = await startWebhookReceiver();
    const sub = await send(201, "POST", "/v1/webhooks", {
      url: receiver.url,
      event: "garment_variant.stock_adjusted",
    });
    const variant = variants[3]!;
    const made = await send(201, "POST", `/v1/garment-variants/${variant.id}/stock-adjustments`, {
      delta: 7,
      reason: "received",
      reference: "PO-77",
    }, a2);
    const [delivery] = await receiver.waitFor(1, {
      timeoutMs: 10_000,
      filter: (r) => r.body.includes(made.id as string),
    });
    const payload = verify(sub.secret as string, delivery!);
    assertEquals(payload.type, "garment_variant.stock_adjusted");
    const data = payload.data as Json;
    assertEquals(
      [data.id, data.garmentVariantId, data.delta, data.reason, data.reference],
      [made.id, variant.id, 7, "received", "PO-77"],
    );
    assertEquals(data.stockOnHandAfter, (variant.stockOnHand as number) + 7);
    // Anything but the signed bytes fails verification.
    assert.throws(() => verify(sub.secret as string, { ...delivery!, body: delivery!.body + " " }));
  });
});
