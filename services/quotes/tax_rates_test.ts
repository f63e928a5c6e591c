import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Envelope, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { Config } from "./config.ts";
import { ensureDefaultTaxRate, findTaxRate } from "./store/tax_rates.ts";
import { quotesService } from "./app.ts";
import { transaction } from "@printshop/shared/db";
import { withOrganization } from "@printshop/shared/db/tenancy";

/** Store calls as the service makes them: the runtime role, for `org`'s work. */
const as = <T>(org: string, fn: () => Promise<T>): Promise<T> => withOrganization(org, fn);

interface Rate {
  id: string;
  name: string;
  ratePct: number;
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
}

async function harness(): Promise<ServiceHarness<Config>> {
  return await serviceHarness(quotesService);
}

async function json<T = unknown>(res: Response): Promise<Envelope<T>> {
  return await res.json() as Envelope<T>;
}

async function list(h: ServiceHarness<Config>, org: string): Promise<Rate[]> {
  const res = await h.request("GET", "/v1/tax-rates", { organizationId: org });
  assertEquals(res.status, 200);
  return (await json<{ items: Rate[] }>(res)).data.items;
}

async function create(
  h: ServiceHarness<Config>,
  org: string,
  body: Record<string, unknown>,
): Promise<Rate> {
  const res = await h.request("POST", "/v1/tax-rates", { body, organizationId: org });
  assertEquals(res.status, 201, JSON.stringify(await res.clone().json()));
  return (await json<Rate>(res)).data;
}

async function createdEvents(h: ServiceHarness<Config>, org: string): Promise<number> {
  const rows = await h.sql`
    SELECT id FROM outbox WHERE organization_id = ${org} AND type = 'tax_rate.created'`;
  return rows.length;
}

Deno.test("tax rates: GST 10 % is the default on the first list, once", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const [gst, ...rest] = await list(h, org);
  assertEquals(rest, []);
  assertEquals([gst?.name, gst?.ratePct, gst?.isDefault], ["GST", 10, true]);
  assert(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(gst!.createdAt));
  assertEquals(await list(h, org), [gst], "the second list finds it, creates nothing");
  assertEquals(await createdEvents(h, org), 1);
});

Deno.test("tax rates: concurrent first calls create exactly one default", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const lists = await Promise.all(Array.from({ length: 12 }, () => list(h, org)));
  const ids = new Set(lists.map((l) => l.map((r) => r.id).join()));
  assertEquals(ids.size, 1, "every caller saw the same single rate");
  const rows = await h.sql`SELECT id FROM tax_rates WHERE organization_id = ${org}`;
  assertEquals(rows.length, 1);
  assertEquals(await createdEvents(h, org), 1);

  const direct = crypto.randomUUID();
  const refs = await Promise.all([
    ...Array.from({ length: 6 }, () => as(direct, () => ensureDefaultTaxRate(h.deps.sql, direct))),
    ...Array.from(
      { length: 6 },
      () => as(direct, () => transaction(h.deps.sql, (tx) => ensureDefaultTaxRate(tx, direct))),
    ),
  ]);
  assertEquals(new Set(refs.map((r) => r.id)).size, 1);
  assertEquals([refs[0]?.name, Number(refs[0]?.ratePct)], ["GST", 10]);
  assertEquals(
    (await h.sql`SELECT id FROM tax_rates WHERE organization_id = ${direct}`).length,
    1,
  );
  assertEquals(await createdEvents(h, direct), 1);
});

Deno.test("tax rates: ensureDefaultTaxRate and findTaxRate for quote writes", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const gst = await as(org, () => ensureDefaultTaxRate(h.deps.sql, org));
  assertEquals(await as(org, () => findTaxRate(h.deps.sql, org, gst.id)), gst);
  assertEquals(
    await as(other, () => findTaxRate(h.deps.sql, other, gst.id)),
    null,
    "another organisation's rate",
  );
  assertEquals(await as(org, () => findTaxRate(h.deps.sql, org, crypto.randomUUID())), null);
  const vat = await create(h, org, { name: "VAT", ratePct: 20, isDefault: true });
  const now = await as(org, () => transaction(h.deps.sql, (tx) => ensureDefaultTaxRate(tx, org)));
  assertEquals([now.id, now.name, Number(now.ratePct)], [vat.id, "VAT", 20]);
  // A rollback takes the lazily created default and its event with it.
  const rolledBack = crypto.randomUUID();
  await assert.rejects(as(rolledBack, () =>
    transaction(h.deps.sql, async (tx) => {
      await ensureDefaultTaxRate(tx, rolledBack);
      throw new Error("quote create failed");
    })));
  assertEquals(
    (await h.sql`SELECT id FROM tax_rates WHERE organization_id = ${rolledBack}`).length,
    0,
  );
  assertEquals(await createdEvents(h, rolledBack), 0);
});

Deno.test("tax rates: POST creates a rate, isDefault moves the default, list puts it first", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const [gst] = await list(h, org);
  const zero = await create(h, org, { name: "GST-free", ratePct: 0 });
  assertEquals([zero.name, zero.ratePct, zero.isDefault], ["GST-free", 0, false]);
  const half = await create(h, org, { name: "Half", ratePct: 12.3456 });
  assertEquals(half.ratePct, 12.3456);
  assertEquals((await list(h, org)).map((r) => r.name), ["GST", "GST-free", "Half"]);

  const vat = await create(h, org, { name: "  VAT  ", ratePct: 20, isDefault: true });
  assertEquals([vat.name, vat.isDefault], ["VAT", true]);
  const rates = await list(h, org);
  assertEquals(rates.map((r) => [r.name, r.isDefault]), [
    ["VAT", true],
    ["GST", false],
    ["GST-free", false],
    ["Half", false],
  ]);
  const events = await h.sql<{ type: string; aggregate_id: string }[]>`
    SELECT type, aggregate_id FROM outbox WHERE organization_id = ${org} ORDER BY id`;
  assertEquals(events.map((e) => [e.type, e.aggregate_id]), [
    ["tax_rate.created", gst!.id],
    ["tax_rate.created", zero.id],
    ["tax_rate.created", half.id],
    ["tax_rate.updated", gst!.id],
    ["tax_rate.created", vat.id],
  ]);
});

Deno.test("tax rates: a default created before any list replaces GST; concurrent defaults settle on one", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  await create(h, org, { name: "VAT", ratePct: 20, isDefault: true });
  assertEquals((await list(h, org)).map((r) => r.name), ["VAT"], "no GST once a default exists");

  const busy = crypto.randomUUID();
  await Promise.all([
    ...Array.from(
      { length: 6 },
      (_, i) => create(h, busy, { name: `R${i}`, ratePct: i, isDefault: true }),
    ),
    ...Array.from({ length: 6 }, () => list(h, busy)),
  ]);
  const rates = await list(h, busy);
  assertEquals(rates.filter((r) => r.isDefault).length, 1);
  assertEquals(rates[0]?.isDefault, true);
});

Deno.test("tax rates: tenant isolation", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const mine = await create(h, org, { name: "VAT", ratePct: 20 });
  const theirs = await list(h, other);
  assertEquals(theirs.map((r) => r.name), ["GST"], "only their own lazily created default");
  assert(!theirs.some((r) => r.id === mine.id));
});

Deno.test("tax rates: POST refuses bad input with 400 details and writes nothing", async (t) => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const cases: [string, unknown, string, string?][] = [
    ["malformed JSON", "{nope", "invalid_json"],
    [
      "an unknown field",
      { name: "VAT", ratePct: 20, country: "UK" },
      "validation_error",
      "country",
    ],
    ["a wrong type", { name: "VAT", ratePct: "20" }, "validation_error", "ratePct"],
    ["a missing name", { ratePct: 20 }, "validation_error", "name"],
    ["an empty name", { name: "  ", ratePct: 20 }, "validation_error", "name"],
    ["a negative rate", { name: "VAT", ratePct: -1 }, "validation_error", "ratePct"],
    ["a rate above 100", { name: "VAT", ratePct: 100.5 }, "validation_error", "ratePct"],
    ["too many decimals", { name: "VAT", ratePct: 10.12345 }, "validation_error", "ratePct"],
    [
      "a non-boolean isDefault",
      { name: "VAT", ratePct: 20, isDefault: 1 },
      "validation_error",
      "isDefault",
    ],
    ["an array body", [], "validation_error"],
  ];
  for (const [name, body, code, path] of cases) {
    await t.step(name, async () => {
      const res = await h.request("POST", "/v1/tax-rates", { body, organizationId: org });
      assertEquals(res.status, 400);
      const envelope = await json(res);
      assertEquals([envelope.error, envelope.status], [code, false]);
      if (path) assert(envelope.details?.some((d) => d.path === path), JSON.stringify(envelope));
    });
  }
  assertEquals((await h.sql`SELECT id FROM tax_rates`).length, 0);
  assertEquals((await h.sql`SELECT id FROM outbox`).length, 0);
});

Deno.test("tax rates: a quotes.read caller can list but not create", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const refused = await h.request("POST", "/v1/tax-rates", {
    body: { name: "VAT", ratePct: 20 },
    organizationId: org,
    scopes: ["quotes.read"],
  });
  assertEquals(refused.status, 403);
  const envelope = await json(refused);
  assertEquals(envelope.error, "insufficient_scope");
  assert(envelope.message.includes("quotes.write"));
  const read = await h.request("GET", "/v1/tax-rates", {
    organizationId: org,
    scopes: ["quotes.read"],
  });
  assertEquals(read.status, 200);
  assertEquals(
    (await json<{ items: Rate[] }>(read)).data.items.map((r) => r.name),
    ["GST"],
  );
});

Deno.test("GET /v1/tax-rates and /v1/markup-groups are offset lists like every other", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const as = { organizationId: org };
  for (const [name, ratePct] of [["B", 5], ["A", 7]] as const) {
    await create(h, org, { name, ratePct });
  }
  const page = async <T>(path: string): Promise<{ items: T[]; totalCount: number }> => {
    const res = await h.request("GET", path, as);
    assertEquals(res.status, 200, path);
    return (await json<{ items: T[]; totalCount: number }>(res)).data;
  };
  // The default first, then by creation; a sort asked for replaces that order.
  assertEquals((await page<Rate>("/v1/tax-rates")).items.map((r) => r.name), ["GST", "B", "A"]);
  assertEquals(
    (await page<Rate>("/v1/tax-rates?sortField=name")).items.map((r) => r.name),
    ["A", "B", "GST"],
  );
  const second = await page<Rate>("/v1/tax-rates?limit=1&offset=1&sortField=ratePct");
  assertEquals([second.items.map((r) => r.ratePct), second.totalCount], [[7], 3]);
  const filtered = await page<Rate>(
    `/v1/tax-rates?filters=${
      encodeURIComponent(JSON.stringify([{ field: "ratePct", op: "lt", value: 6 }]))
    }`,
  );
  assertEquals(filtered.items.map((r) => r.name), ["B"]);

  for (const lane of ["setup", "garment"]) {
    const res = await h.request("POST", "/v1/markup-groups", {
      ...as,
      body: {
        name: lane,
        lane,
        bands: [{ from: lane === "setup" ? 0 : 1, markupType: "fixed", markupValue: 1 }],
      },
    });
    assertEquals(res.status, 201);
  }
  const groups = await page<{ name: string }>("/v1/markup-groups?lane=garment");
  assertEquals([groups.items.map((g) => g.name), groups.totalCount], [["garment"], 1]);
  const refused = await h.request("GET", "/v1/markup-groups?sortField=bands", as);
  assertEquals(refused.status, 400);
});
