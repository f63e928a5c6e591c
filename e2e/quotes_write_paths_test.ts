/**
 * The quotes service's fast write paths through the real gateway: a row appended takes its number
 * in its INSERT, one inserted at a position is placed afterwards, a delete closes its gap in one
 * statement, a line that adds nothing is not priced, a recomputation writes back in one statement,
 * answers come from the INSERT, events travel with the write-back, and a long quote page reads its
 * documents in parts. Each guarantee is checked only through public endpoints: sequences stay
 * 1..n (also under parallel writes), totals equal what the rows imply, an answer is the row a read
 * then shows (with and without costs.read), each write emits exactly its event carrying that row
 * (and one for each other variant it re-priced), pages agree with single reads, and another
 * organisation's ids are 404.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startTestStack, type TestStack } from "@printshop/shared/testing";

// deno-lint-ignore no-explicit-any
type Json = any;

/** JSON with object keys sorted (event payloads are stored as jsonb, which reorders them). */
const canonical = (value: unknown): string =>
  JSON.stringify(
    value,
    (_key, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
        : v,
  );

const ADJUSTMENTS = new Set(["Discount", "Surcharge"]);

/** Round half away from zero to the cent, as the service does (inputs here stay small). */
const cents = (x: number): number => Math.sign(x) * Math.round(Math.abs(x) * 100 + 1e-7) / 100;

/** The quote's totals as its rows imply them (docs "Quote pricing rules"). */
function impliedTotals(quote: Json): [number, number, number] {
  let sum = 0;
  for (const group of quote.groups) {
    let goods = 0;
    for (const line of group.lines) {
      if (ADJUSTMENTS.has(line.lineType)) continue;
      const gross = line.variants.length > 0
        ? line.variants.reduce((a: number, v: Json) => a + v.quantity * v.unitPriceExGst, 0)
        : line.quantity * line.unitPriceExGst;
      const discount = line.discountValueType === "Percentage"
        ? gross * (line.discountPercentage ?? 0) / 100
        : line.discountValueType === "Flat"
        ? line.discountPercentage ?? 0
        : 0;
      goods += gross - discount;
    }
    for (const d of group.decorations) {
      goods += d.quantity * d.baseUnitCost + (d.includeSetupCost ? d.baseSetupCost : 0);
    }
    let adjustments = 0;
    for (const line of group.lines) {
      if (!ADJUSTMENTS.has(line.lineType)) continue;
      const amount = line.valueType === "Percentage"
        ? goods * (line.percentage ?? 0) / 100
        : line.quantity * line.unitPriceExGst;
      adjustments += line.lineType === "Discount" ? -amount : amount;
    }
    sum += goods + adjustments;
  }
  const subtotal = cents(sum);
  const gst = cents(subtotal * quote.taxRatePct / 100);
  return [subtotal, gst, cents(subtotal + gst)];
}

/** Every group, line, variant and decoration of a quote, by id. */
function rowsById(quote: Json): Map<string, Json> {
  const rows = new Map<string, Json>();
  for (const g of quote.groups) {
    rows.set(g.id, g);
    for (const l of g.lines) {
      rows.set(l.id, l);
      for (const v of l.variants) rows.set(v.id, v);
    }
    for (const d of g.decorations) rows.set(d.id, d);
  }
  return rows;
}

/** A group's lines and decorations in their one sequence, as `name@sortOrder`. */
function groupOrder(quote: Json, groupId: string): string[] {
  const group = quote.groups.find((g: Json) => g.id === groupId);
  return [
    ...group.lines.map((l: Json) => ({ name: l.productName, n: l.sortOrder })),
    ...group.decorations.map((d: Json) => ({ name: d.position, n: d.sortOrder })),
  ].sort((a, b) => a.n - b.n).map((r) => `${r.name}@${r.n}`);
}

const isOneToN = (numbers: number[]): boolean =>
  [...numbers].sort((a, b) => a - b).every((n, i) => n === i + 1);

/** Every 1..n sequence of the quote: its groups, each group's rows, each line's variants. */
function assertSequences(quote: Json, label: string): void {
  assert(isOneToN(quote.groups.map((g: Json) => g.sortOrder)), `${label}: groups`);
  for (const g of quote.groups) {
    const numbers = [
      ...g.lines.map((l: Json) => l.sortOrder),
      ...g.decorations.map((d: Json) => d.sortOrder),
    ];
    assert(isOneToN(numbers), `${label}: rows of group ${g.name}: ${numbers}`);
    for (const l of g.lines) {
      const variants = l.variants.map((v: Json) => v.sortOrder);
      assert(isOneToN(variants), `${label}: variants of ${l.productName}: ${variants}`);
    }
  }
}

interface Client {
  key: string;
  organizationId: string;
  /** Sends and returns status and parsed body. */
  raw(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  /** Sends, asserts the status and returns `data`. */
  send(status: number, method: string, path: string, body?: unknown): Promise<Json>;
}

async function client(stack: TestStack, scopes?: readonly string[]): Promise<Client> {
  const shop = await stack.tenant(scopes);
  // The checks below send more than the default 600 requests a minute.
  await stack.admin("PUT", `/admin/organizations/${shop.organizationId}/limits`, {
    requestsPerMinute: 100_000,
  });
  return withKey(stack, shop.organizationId, shop.apiKey);
}

/** Another key of `shop`'s organisation, with only these scopes. */
async function sameShop(
  stack: TestStack,
  shop: Client,
  scopes: readonly string[],
): Promise<Client> {
  const key = await stack.admin<{ data: { apiKey: string } }>(
    "POST",
    `/admin/organizations/${shop.organizationId}/api-keys`,
    { scopes },
  );
  return withKey(stack, shop.organizationId, key.data.apiKey);
}

function withKey(stack: TestStack, organizationId: string, key: string): Client {
  const raw = async (method: string, path: string, body?: unknown) => {
    const res = await stack.call(key, method, path, body);
    const text = await res.text();
    return { status: res.status, body: text === "" ? null : JSON.parse(text) };
  };
  return {
    key,
    organizationId,
    raw,
    async send(status, method, path, body) {
      const res = await raw(method, path, body);
      assertEquals(
        res.status,
        status,
        `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`,
      );
      return res.body?.data;
    },
  };
}

/** The organisation's events of quote rows (the event log, once its count stops growing). */
async function rowEvents(shop: Client, atLeast: number): Promise<Json[]> {
  for (let attempt = 0;; attempt++) {
    const events: Json[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await shop.send(
        200,
        "GET",
        `/v1/event-log?limit=200${after ? `&after=${after}` : ""}`,
      );
      events.push(...page.items);
      if (!page.hasMore) break;
      after = page.lastEventId;
    }
    const rows = events.filter((e) => /^quote_(group|line|variant|decoration)\./.test(e.type));
    if (rows.length >= atLeast || attempt === 100) return rows;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

Deno.test("quote row writes keep order, totals, answers and events as a read shows them", async (t) => {
  await using stack: TestStack = await startTestStack();

  await t.step(
    "lines and decorations share one 1..n sequence through inserts, moves and deletes",
    async () => {
      const shop = await client(stack);
      const quote = await shop.send(201, "POST", "/v1/quotes", { reference: "Order" });
      const group = await shop.send(201, "POST", `/v1/quotes/${quote.id}/groups`, { name: "G" });
      const read = () => shop.send(200, "GET", `/v1/quotes/${quote.id}`);
      const line = (name: string, extra: Json = {}) =>
        shop.send(201, "POST", `/v1/quote-groups/${group.id}/lines`, {
          lineType: "Garment",
          productName: name,
          ...extra,
        });
      const decoration = (name: string, extra: Json = {}) =>
        shop.send(201, "POST", `/v1/quote-groups/${group.id}/decorations`, {
          quantity: 1,
          position: name,
          ...extra,
        });
      const expectOrder = async (expected: string[]) =>
        assertEquals(groupOrder(await read(), group.id), expected);

      const l1 = await line("L1");
      const d1 = await decoration("D1");
      const l2 = await line("L2");
      assertEquals([l1.sortOrder, d1.sortOrder, l2.sortOrder], [1, 2, 3]);
      assertEquals((await line("L0", { sortOrder: 1 })).sortOrder, 1);
      assertEquals((await decoration("D2", { sortOrder: 4 })).sortOrder, 4);
      assertEquals((await line("L3", { sortOrder: 6 })).sortOrder, 6);
      // A position past the end is the end.
      assertEquals((await line("L4", { sortOrder: 100_000 })).sortOrder, 7);
      await expectOrder(["L0@1", "L1@2", "D1@3", "D2@4", "L2@5", "L3@6", "L4@7"]);

      for (const bad of [0, -1, 1.5, "2", 100_001, null]) {
        const asLine = await shop.raw("POST", `/v1/quote-groups/${group.id}/lines`, {
          lineType: "Garment",
          productName: "bad",
          sortOrder: bad,
        });
        assertEquals(asLine.status, 400, `line sortOrder ${JSON.stringify(bad)}`);
        const asDecoration = await shop.raw("POST", `/v1/quote-groups/${group.id}/decorations`, {
          quantity: 1,
          sortOrder: bad,
        });
        assertEquals(asDecoration.status, 400, `decoration sortOrder ${JSON.stringify(bad)}`);
      }
      await expectOrder(["L0@1", "L1@2", "D1@3", "D2@4", "L2@5", "L3@6", "L4@7"]);

      // Deletes from the middle, the start and the end close their gaps; appends follow the last.
      const idOf = async (name: string): Promise<string> =>
        [...rowsById(await read()).values()].find((r) =>
          r.productName === name || r.position === name
        ).id;
      await shop.send(200, "DELETE", `/v1/quote-decorations/${d1.id}`);
      await shop.send(200, "DELETE", `/v1/quote-lines/${await idOf("L0")}`);
      await shop.send(200, "DELETE", `/v1/quote-lines/${await idOf("L4")}`);
      await expectOrder(["L1@1", "D2@2", "L2@3", "L3@4"]);
      assertEquals((await line("L5")).sortOrder, 5);
      assertEquals((await decoration("D3")).sortOrder, 6);
      await shop.send(200, "DELETE", `/v1/quote-lines/${l2.id}`);
      await expectOrder(["L1@1", "D2@2", "L3@3", "L5@4", "D3@5"]);

      // Moves, both ways and past the end.
      assertEquals(
        (await shop.send(200, "PATCH", `/v1/quote-decorations/${await idOf("D3")}`, {
          sortOrder: 1,
        }))
          .sortOrder,
        1,
      );
      assertEquals(
        (await shop.send(200, "PATCH", `/v1/quote-lines/${l1.id}`, { sortOrder: 100_000 }))
          .sortOrder,
        5,
      );
      assertEquals(
        (await shop.send(200, "PATCH", `/v1/quote-lines/${await idOf("L5")}`, { sortOrder: 2 }))
          .sortOrder,
        2,
      );
      await expectOrder(["D3@1", "L5@2", "D2@3", "L3@4", "L1@5"]);
      assertEquals(
        (await shop.raw("PATCH", `/v1/quote-lines/${l1.id}`, { sortOrder: 0 })).status,
        400,
      );

      // Variants keep their own sequence.
      const variant = (size: string, extra: Json = {}) =>
        shop.send(201, "POST", `/v1/quote-lines/${l1.id}/variants`, {
          size,
          quantity: 1,
          unitPriceExGst: 1,
          ...extra,
        });
      const a = await variant("a");
      await variant("b");
      await variant("z", { sortOrder: 1 });
      await variant("y", { sortOrder: 100_000 });
      await variant("x", { sortOrder: 3 });
      await shop.send(200, "DELETE", `/v1/quote-variants/${a.id}`);
      assertEquals((await variant("w")).sortOrder, 5);
      const sizes = (await read()).groups[0].lines.find((l: Json) => l.id === l1.id).variants
        .map((v: Json) => `${v.size}@${v.sortOrder}`);
      assertEquals(sizes, ["z@1", "x@2", "b@3", "y@4", "w@5"]);
      // A second group's rows are numbered apart from the first's.
      const other = await shop.send(201, "POST", `/v1/quotes/${quote.id}/groups`, { name: "H" });
      await shop.send(201, "POST", `/v1/quote-groups/${other.id}/lines`, {
        lineType: "Garment",
        productName: "X1",
      });
      await shop.send(201, "POST", `/v1/quote-groups/${other.id}/lines`, {
        lineType: "Garment",
        productName: "X0",
        sortOrder: 1,
      });
      const final = await read();
      assertEquals(groupOrder(final, other.id), ["X0@1", "X1@2"]);
      assertEquals(groupOrder(final, group.id), ["D3@1", "L5@2", "D2@3", "L3@4", "L1@5"]);
    },
  );

  await t.step(
    "parallel appends, inserts, moves and deletes never duplicate or gap a sequence",
    async () => {
      const shop = await client(stack);
      const quote = await shop.send(201, "POST", "/v1/quotes", { reference: "Parallel" });
      const group = await shop.send(201, "POST", `/v1/quotes/${quote.id}/groups`, { name: "G" });
      const read = () => shop.send(200, "GET", `/v1/quotes/${quote.id}`);
      const statuses = (all: { status: number }[]) => all.map((r) => r.status);

      const appended = await Promise.all([
        ...Array.from(
          { length: 12 },
          (_, i) =>
            shop.raw("POST", `/v1/quote-groups/${group.id}/lines`, {
              lineType: "Garment",
              productName: `L${i}`,
            }),
        ),
        ...Array.from(
          { length: 6 },
          (_, i) =>
            shop.raw("POST", `/v1/quote-groups/${group.id}/decorations`, {
              quantity: 2,
              baseUnitCost: 1.5,
              position: `D${i}`,
            }),
        ),
      ]);
      assert(
        appended.every((r) => r.status === 201),
        `${statuses(appended)}`,
      );
      // Each answer names the number its row was given, and no two rows were given one.
      assert(isOneToN(appended.map((r) => r.body.data.sortOrder)));
      assertSequences(await read(), "after parallel appends");

      const before = groupOrder(await read(), group.id);
      const rows = [...rowsById(await read()).values()].filter((r) => r.quoteGroupId === group.id);
      const pathOf = (r: Json) =>
        "lineType" in r ? `/v1/quote-lines/${r.id}` : `/v1/quote-decorations/${r.id}`;
      const mixed = await Promise.all([
        ...rows.filter((_, i) => i % 3 === 0).map((r) => shop.raw("DELETE", pathOf(r))),
        ...rows.filter((_, i) => i % 3 === 0).map((r) => shop.raw("DELETE", pathOf(r))),
        ...rows.filter((_, i) => i % 3 === 1).map((r, i) =>
          shop.raw("PATCH", pathOf(r), { sortOrder: 1 + (i * 7) % 20 })
        ),
        ...Array.from(
          { length: 6 },
          (_, i) =>
            shop.raw("POST", `/v1/quote-groups/${group.id}/lines`, {
              lineType: "Service",
              productName: `S${i}`,
              quantity: 1,
              unitPriceExGst: 2,
              ...(i % 2 ? { sortOrder: 2 } : {}),
            }),
        ),
      ]);
      // Each row deleted twice at once: one delete wins, the other finds nothing.
      assert(mixed.every((r) => r.status < 300 || r.status === 404), `${statuses(mixed)}`);
      assertEquals(mixed.filter((r) => r.status === 404).length, Math.ceil(before.length / 3));
      const after = await read();
      assertSequences(after, "after parallel deletes, moves and inserts");
      assertEquals(
        groupOrder(after, group.id).length,
        before.length - Math.ceil(before.length / 3) + 6,
      );

      const line = await shop.send(201, "POST", `/v1/quote-groups/${group.id}/lines`, {
        lineType: "Garment",
        productName: "V",
      });
      const variants = await Promise.all(
        Array.from(
          { length: 16 },
          (_, i) =>
            shop.raw("POST", `/v1/quote-lines/${line.id}/variants`, {
              size: `S${i}`,
              quantity: i + 1,
              unitPriceExGst: 2,
              ...(i % 4 === 0 ? { sortOrder: 1 } : {}),
            }),
        ),
      );
      assert(variants.every((r) => r.status === 201), `${statuses(variants)}`);
      const ids = variants.map((r) => r.body.data.id);
      const churn = await Promise.all([
        ...ids.filter((_, i) => i % 2 === 0).map((id) =>
          shop.raw("DELETE", `/v1/quote-variants/${id}`)
        ),
        ...ids.filter((_, i) => i % 2 === 1).map((id, i) =>
          shop.raw("PATCH", `/v1/quote-variants/${id}`, { sortOrder: 1 + i, quantity: 3 })
        ),
        ...Array.from(
          { length: 4 },
          (_, i) =>
            shop.raw("POST", `/v1/quote-lines/${line.id}/variants`, { size: `T${i}`, quantity: 1 }),
        ),
      ]);
      assert(churn.every((r) => r.status < 300), `${statuses(churn)}`);
      const final = await read();
      assertSequences(final, "after parallel variant writes");
      const priced = final.groups[0].lines.find((l: Json) => l.id === line.id);
      assertEquals(priced.variants.length, 12);
      assertEquals(priced.quantity, 8 * 3 + 4);
      assertEquals([final.subtotalExGst, final.gstAmount, final.totalIncGst], impliedTotals(final));
    },
  );

  await t.step(
    "every row write leaves totals as the rows imply them, answers as a read shows them and exactly its event",
    async () => {
      const shop = await client(stack);
      const plain = await sameShop(stack, shop, ["quotes.read", "quotes.write"]);
      await shop.send(201, "POST", "/v1/markup-groups", {
        name: "Tees",
        lane: "garment",
        isDefault: true,
        bands: [
          { from: 0, markupType: "percentage", markupValue: 60 },
          { from: 10, markupType: "fixed", markupValue: 2.5 },
        ],
      });
      const quote = await shop.send(201, "POST", "/v1/quotes", { reference: "Pricing" });
      const groups = [
        await shop.send(201, "POST", `/v1/quotes/${quote.id}/groups`, { name: "A" }),
        await shop.send(201, "POST", `/v1/quotes/${quote.id}/groups`, { name: "B" }),
      ];
      const read = (who: Client = shop) => who.send(200, "GET", `/v1/quotes/${quote.id}`);
      const written: { type: string; id: string; row: Json; what: string }[] = [];
      let previous = await read();

      /** One write: checks totals, updatedAt, the answer against a read; remembers its event. */
      const write = async (
        who: Client,
        method: string,
        path: string,
        body: Json,
        event: string,
        rowId?: string,
      ): Promise<Json> => {
        const what = `${method} ${path} ${JSON.stringify(body ?? {})}`;
        const answer = await who.send(method === "POST" ? 201 : 200, method, path, body);
        const id = rowId ?? answer.id;
        const full = await read();
        assertEquals(
          [full.subtotalExGst, full.gstAmount, full.totalIncGst],
          impliedTotals(full),
          `${what}: totals`,
        );
        assert(full.updatedAt > previous.updatedAt, `${what}: the quote's updatedAt moved`);
        assertSequences(full, what);
        if (method !== "DELETE") {
          const shown = rowsById(who === shop ? full : await read(plain)).get(id);
          assertEquals(canonical(answer), canonical(shown), `${what}: the answer is the row read`);
        }
        written.push({
          type: event,
          id,
          row: method === "DELETE" ? null : rowsById(full).get(id),
          what,
        });
        // Each other variant the write re-priced (its line's quantity moved it to another band)
        // is announced too, after the write's own event, in the line's order.
        const before = rowsById(previous);
        const repriced = [...rowsById(full).values()]
          .filter((row) => "quoteLineId" in row && row.id !== id && before.has(row.id))
          .filter((row) =>
            ["unitPriceExGst", "markupType", "markupValue"].some((field) =>
              row[field] !== before.get(row.id)![field]
            )
          )
          .sort((a, b) => a.sortOrder - b.sortOrder || (a.id < b.id ? -1 : 1));
        for (const row of repriced) {
          written.push({
            type: "quote_variant.updated",
            id: row.id,
            row,
            what: `${what}: re-priced`,
          });
        }
        previous = full;
        return answer;
      };
      /** A change priced like any other but moving no price: totals and rows must not move. */
      const recomputeChangesNothing = async (lineId: string) => {
        const before = await read();
        await write(
          shop,
          "PATCH",
          `/v1/quote-lines/${lineId}`,
          { description: `${Math.random()}` },
          "quote_line.updated",
          lineId,
        );
        const after = await read();
        assertEquals(after.totalIncGst, before.totalIncGst);
        const strip = (row: Json) => ({
          ...row,
          description: null,
          updatedAt: null,
          variants: null,
        });
        for (const [id, row] of rowsById(after)) {
          if (row.lines || id === lineId) continue;
          assertEquals(canonical(strip(row)), canonical(strip(rowsById(before).get(id))));
        }
      };

      const lines = `/v1/quote-groups/${groups[0].id}/lines`;
      const tee = await write(
        shop,
        "POST",
        lines,
        { lineType: "Garment", productName: "Tee" },
        "quote_line.created",
      );
      const m = await write(shop, "POST", `/v1/quote-lines/${tee.id}/variants`, {
        size: "M",
        quantity: 4,
        buyPrice: 5,
        extraCost: 0.5,
        markupType: "percentage",
        markupValue: 40,
      }, "quote_variant.created");
      const l = await write(shop, "POST", `/v1/quote-lines/${tee.id}/variants`, {
        size: "L",
        quantity: 3,
        buyPrice: 5,
        markupSource: "group",
      }, "quote_variant.created");
      // The line's quantity reaches the next band: the L variant re-bands with it.
      await write(shop, "POST", `/v1/quote-lines/${tee.id}/variants`, {
        size: "XL",
        quantity: 5,
        buyPrice: 6,
        markupSource: "group",
        sortOrder: 1,
      }, "quote_variant.created");
      await write(shop, "POST", `/v1/quote-lines/${tee.id}/variants`, {
        isCustomLine: true,
        quantity: 1,
        buyPrice: 10,
        markupType: "fixed",
        markupValue: 2,
      }, "quote_variant.created");
      await recomputeChangesNothing(tee.id);

      // Lines that add nothing (no recomputation) and lines that do, side by side.
      const adjustments: [string, Json][] = [
        ["nothing: Discount 0 %", { lineType: "Discount", valueType: "Percentage", percentage: 0 }],
        ["Discount 10 %", { lineType: "Discount", valueType: "Percentage", percentage: 10 }],
        ["Surcharge 5 %", { lineType: "Surcharge", valueType: "Percentage", percentage: 5 }],
        ["nothing: Surcharge Flat × 0", { lineType: "Surcharge", quantity: 0, unitPriceExGst: 50 }],
        ["Discount Flat 2 × 3", { lineType: "Discount", quantity: 2, unitPriceExGst: 3 }],
        ["nothing: Flat with a percentage", {
          lineType: "Discount",
          valueType: "Flat",
          percentage: 20,
          unitPriceExGst: 9,
        }],
        ["zero gross, Flat discount 5", {
          lineType: "Garment",
          discountValueType: "Flat",
          discountPercentage: 5,
        }],
        ["nothing: 3 × 2 less Flat 6", {
          lineType: "Garment",
          quantity: 3,
          unitPriceExGst: 2,
          discountValueType: "Flat",
          discountPercentage: 6,
        }],
        ["nothing: 5 × 0 less 50 %", {
          lineType: "Garment",
          quantity: 5,
          discountValueType: "Percentage",
          discountPercentage: 50,
        }],
        ["Service 2 × 7.5 at 1", {
          lineType: "Service",
          quantity: 2,
          unitPriceExGst: 7.5,
          sortOrder: 1,
        }],
        ["nothing: Other at 2", { lineType: "Other", sortOrder: 2 }],
      ];
      const made = new Map<string, Json>();
      for (const [name, body] of adjustments) {
        made.set(
          name,
          await write(shop, "POST", lines, { productName: name, ...body }, "quote_line.created"),
        );
      }
      const refused = await shop.raw("POST", lines, {
        lineType: "Discount",
        productName: "no rate",
        valueType: "Percentage",
        percentage: null,
      });
      assertEquals(refused.status, 400);
      // A variant under the zero-gross line's Flat discount: the discount now comes off its goods.
      await write(
        shop,
        "POST",
        `/v1/quote-lines/${made.get("zero gross, Flat discount 5").id}/variants`,
        {
          size: "S",
          quantity: 2,
          unitPriceExGst: 10,
        },
        "quote_variant.created",
      );
      await write(shop, "POST", `/v1/quote-groups/${groups[0].id}/decorations`, {
        quantity: 12,
        unitCost: 1.2,
        markupType: "percentage",
        markupValue: 50,
        setupCost: 20,
        setupMarkupType: "fixed",
        setupMarkupValue: 5,
        includeSetupCost: true,
      }, "quote_decoration.created");
      await recomputeChangesNothing(tee.id);

      const d0 = made.get("nothing: Discount 0 %").id;
      const patches: [string, string, Json][] = [
        ["quote-lines", d0, { percentage: 15 }],
        ["quote-variants", l.id, { quantity: 1 }],
        ["quote-variants", m.id, { unitPriceExGst: 9.99 }],
        ["quote-variants", m.id, { buyPrice: 7 }],
        ["quote-variants", l.id, { sortOrder: 1, quantity: 30 }],
      ];
      for (const [collection, id, body] of patches) {
        const event = collection === "quote-lines" ? "quote_line.updated" : "quote_variant.updated";
        await write(shop, "PATCH", `/v1/${collection}/${id}`, body, event, id);
      }

      // Without costs.read: the answers leave costs out exactly as reads do.
      const other = `/v1/quote-groups/${groups[1].id}`;
      const p = await write(plain, "POST", `${other}/lines`, {
        lineType: "Garment",
        productName: "P",
      }, "quote_line.created");
      const pm = await write(plain, "POST", `/v1/quote-lines/${p.id}/variants`, {
        size: "M",
        quantity: 3,
        unitPriceExGst: 12.5,
      }, "quote_variant.created");
      const pl = await write(plain, "POST", `/v1/quote-lines/${p.id}/variants`, {
        size: "L",
        quantity: 8,
        markupSource: "group",
        sortOrder: 1,
      }, "quote_variant.created");
      assert(!("buyPrice" in pl) && !("markupValue" in pl), JSON.stringify(pl));
      await write(
        plain,
        "PATCH",
        `/v1/quote-variants/${pm.id}`,
        { quantity: 4, sortOrder: 1 },
        "quote_variant.updated",
        pm.id,
      );
      await write(
        plain,
        "PATCH",
        `/v1/quote-lines/${p.id}`,
        { title: "x", sortOrder: 1 },
        "quote_line.updated",
        p.id,
      );
      await write(plain, "POST", `${other}/lines`, {
        lineType: "Service",
        productName: "PS",
        quantity: 1,
        unitPriceExGst: 1,
        sortOrder: 1,
      }, "quote_line.created");
      await write(
        plain,
        "POST",
        `${other}/decorations`,
        { quantity: 3, baseUnitCost: 2 },
        "quote_decoration.created",
      );

      await write(
        shop,
        "DELETE",
        `/v1/quote-variants/${pm.id}`,
        undefined,
        "quote_variant.deleted",
        pm.id,
      );
      const d10 = made.get("Discount 10 %").id;
      await write(shop, "DELETE", `/v1/quote-lines/${d10}`, undefined, "quote_line.deleted", d10);
      await recomputeChangesNothing(tee.id);

      // Exactly one event per write and per row it re-priced, in order, each carrying the row as
      // a read showed it then.
      assert(
        written.some((w) => w.what.endsWith(": re-priced")),
        "some write re-banded another variant",
      );
      const events = await rowEvents(shop, written.length + 2);
      assertEquals(
        events.map((e) => `${e.type} ${e.aggregateId}`),
        [
          ...groups.map((g) => `quote_group.created ${g.id}`),
          ...written.map((w) => `${w.type} ${w.id}`),
        ],
      );
      events.slice(2).forEach((event, i) => {
        const w = written[i]!;
        if (w.row) assertEquals(canonical(event.data), canonical(w.row), w.what);
      });
    },
  );

  await t.step(
    "quote pages of 49, 50, 51 and 200 agree with single reads, stored or not",
    async () => {
      const shop = await client(stack);
      const plain = await sameShop(stack, shop, ["quotes.read"]);
      const ids: string[] = [];
      for (let i = 0; i < 105; i += 15) {
        const made = await Promise.all(
          Array.from(
            { length: Math.min(15, 105 - i) },
            (_, j) =>
              shop.send(201, "POST", "/v1/quotes", {
                reference: `R${String(i + j).padStart(3, "0")}`,
              }),
          ),
        );
        ids.push(...made.map((q) => q.id));
      }
      for (const id of ids.filter((_, i) => i % 7 === 0)) {
        const group = await shop.send(201, "POST", `/v1/quotes/${id}/groups`, { name: "G" });
        const line = await shop.send(201, "POST", `/v1/quote-groups/${group.id}/lines`, {
          lineType: "Garment",
          productName: "T",
        });
        await shop.send(201, "POST", `/v1/quote-lines/${line.id}/variants`, {
          size: "M",
          quantity: 3,
          buyPrice: 4,
          markupType: "fixed",
          markupValue: 1,
        });
      }
      // A page's quotes whose documents are not stored yet are rendered, then stored.
      const firstLong = await shop.send(200, "GET", "/v1/quotes?limit=60&offset=20");
      const firstShort = await plain.send(200, "GET", "/v1/quotes?limit=30&offset=40");

      const single = async (who: Client) => {
        const bodies = new Map<string, string>();
        for (let i = 0; i < ids.length; i += 15) {
          for (
            const q of await Promise.all(
              ids.slice(i, i + 15).map((id) => who.send(200, "GET", `/v1/quotes/${id}`)),
            )
          ) {
            bodies.set(q.id, JSON.stringify(q));
          }
        }
        return bodies;
      };
      const pagesAgree = async (who: Client, truth: Map<string, string>, label: string) => {
        const whole = await who.send(200, "GET", "/v1/quotes?limit=200");
        assertEquals(whole.totalCount, ids.length);
        assertEquals(new Set(whole.items.map((q: Json) => q.id)).size, ids.length);
        const order = whole.items.map((q: Json) => q.id);
        for (const q of whole.items) assertEquals(JSON.stringify(q), truth.get(q.id), label);
        for (const limit of [49, 50, 51, 200]) {
          for (const offset of [0, 1, 49, 50, 55, 104, 105]) {
            const page = await who.send(200, "GET", `/v1/quotes?limit=${limit}&offset=${offset}`);
            assertEquals(page.totalCount, ids.length, `${label} ${limit}/${offset}`);
            assertEquals(page.items.map((q: Json) => q.id), order.slice(offset, offset + limit));
            for (const q of page.items) {
              assertEquals(JSON.stringify(q), truth.get(q.id), `${label} ${limit}/${offset}`);
            }
          }
        }
        const filtered = await who.send(
          200,
          "GET",
          "/v1/quotes?limit=50&search=R0&sortField=reference&sortDirection=asc&offset=40",
        );
        assertEquals(filtered.totalCount, 100);
        assertEquals(
          filtered.items.map((q: Json) => q.reference),
          Array.from({ length: 50 }, (_, i) => `R0${40 + i}`),
        );
        const count = await who.send(200, "GET", "/v1/quotes?limit=0");
        assertEquals([count.items.length, count.totalCount], [0, ids.length]);
      };

      const truth = await single(shop);
      const truthPlain = await single(plain);
      for (const q of firstLong.items) assertEquals(JSON.stringify(q), truth.get(q.id));
      for (const q of firstShort.items) assertEquals(JSON.stringify(q), truthPlain.get(q.id));
      await pagesAgree(shop, truth, "stored");
      await pagesAgree(plain, truthPlain, "stored, without costs.read");
      // Every other quote changed: half the documents are gone again.
      for (let i = 0; i < ids.length; i += 2) {
        await shop.send(200, "PATCH", `/v1/quotes/${ids[i]}`, { notes: "changed" });
      }
      await pagesAgree(shop, await single(shop), "half stored");
    },
  );

  await t.step(
    "another organisation's groups, lines, variants and decorations are 404 and stay as they were",
    async () => {
      const a = await client(stack);
      const b = await client(stack);
      const build = async (shop: Client) => {
        const markup = await shop.send(201, "POST", "/v1/markup-groups", {
          name: "M",
          lane: "garment",
          bands: [{ from: 1, markupType: "percentage", markupValue: 10 }],
        });
        const quote = await shop.send(201, "POST", "/v1/quotes", { reference: "T" });
        const group = await shop.send(201, "POST", `/v1/quotes/${quote.id}/groups`, { name: "G" });
        const line = await shop.send(201, "POST", `/v1/quote-groups/${group.id}/lines`, {
          lineType: "Garment",
          productName: "T",
        });
        const variant = await shop.send(201, "POST", `/v1/quote-lines/${line.id}/variants`, {
          size: "M",
          quantity: 2,
          buyPrice: 3,
          markupType: "fixed",
          markupValue: 1,
        });
        const decoration = await shop.send(
          201,
          "POST",
          `/v1/quote-groups/${group.id}/decorations`,
          {
            quantity: 2,
            unitCost: 1,
            markupType: "fixed",
            markupValue: 1,
          },
        );
        return { markup, quote, group, line, variant, decoration };
      };
      const theirs = await build(a);
      const mine = await build(b);
      const before = JSON.stringify(await a.send(200, "GET", `/v1/quotes/${theirs.quote.id}`));

      const attempts: [string, string, Json?][] = [
        ["POST", `/v1/quote-groups/${theirs.group.id}/lines`, {
          lineType: "Garment",
          productName: "x",
        }],
        ["POST", `/v1/quote-groups/${theirs.group.id}/lines`, {
          lineType: "Garment",
          productName: "x",
          sortOrder: 1,
        }],
        ["POST", `/v1/quote-groups/${theirs.group.id}/decorations`, { quantity: 1 }],
        ["POST", `/v1/quote-groups/${theirs.group.id}/reorder`, {
          items: [{ id: theirs.line.id, kind: "line" }, {
            id: theirs.decoration.id,
            kind: "decoration",
          }],
        }],
        ["PATCH", `/v1/quote-groups/${theirs.group.id}`, { name: "x" }],
        ["PATCH", `/v1/quote-lines/${theirs.line.id}`, { sortOrder: 2 }],
        ["POST", `/v1/quote-lines/${theirs.line.id}/variants`, { size: "S", quantity: 1 }],
        ["PATCH", `/v1/quote-variants/${theirs.variant.id}`, { quantity: 9 }],
        ["PATCH", `/v1/quote-decorations/${theirs.decoration.id}`, { sortOrder: 1 }],
        ["DELETE", `/v1/quote-variants/${theirs.variant.id}`],
        ["DELETE", `/v1/quote-decorations/${theirs.decoration.id}`],
        ["DELETE", `/v1/quote-lines/${theirs.line.id}`],
        ["DELETE", `/v1/quote-groups/${theirs.group.id}`],
        ["GET", `/v1/quotes/${theirs.quote.id}`],
      ];
      for (const [method, path, body] of attempts) {
        assertEquals((await b.raw(method, path, body)).status, 404, `${method} ${path}`);
      }
      // Their ids in the bodies of writes to my own rows are refused, and change nothing.
      const bodies: [string, string, Json][] = [
        ["POST", `/v1/quote-lines/${mine.line.id}/variants`, {
          size: "S",
          quantity: 1,
          markupSource: "group",
          markupGroupId: theirs.markup.id,
        }],
        ["PATCH", `/v1/quote-variants/${mine.variant.id}`, {
          markupSource: "group",
          markupGroupId: theirs.markup.id,
        }],
        ["POST", `/v1/quote-groups/${mine.group.id}/reorder`, {
          items: [
            { id: mine.line.id, kind: "line" },
            { id: mine.decoration.id, kind: "decoration" },
            { id: theirs.line.id, kind: "line" },
          ],
        }],
      ];
      for (const [method, path, body] of bodies) {
        assertEquals((await b.raw(method, path, body)).status, 400, `${method} ${path}`);
      }
      assertEquals(
        JSON.stringify(await a.send(200, "GET", `/v1/quotes/${theirs.quote.id}`)),
        before,
      );
      const list = await b.send(200, "GET", "/v1/quotes?limit=200");
      assertEquals(list.items.map((q: Json) => q.id), [mine.quote.id]);
    },
  );
});
