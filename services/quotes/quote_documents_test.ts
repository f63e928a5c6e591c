/**
 * Stored quote documents (store/quote_documents.ts, migration 0004) against the live render
 * (store/quote_json.ts): whatever sequence of changes a quote goes through, GET /v1/quotes/{id} and
 * GET /v1/quotes send, byte for byte, what rendering the quote now gives, with and without
 * costs.read. Random quotes and random changes, from a seed printed on failure (set
 * DOCUMENTS_SEED to replay one), each change followed by reads that store documents, so the next
 * change must clear them.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";
import { quoteJsonSql } from "./store/quote_json.ts";
import { type ReadDocument, rememberDocuments } from "./store/quote_documents.ts";
import { applyCustomerFacts } from "./store/customers.ts";
import { listQuotesJson, updateQuote } from "./store/quotes.ts";
import { concatBytes } from "@printshop/shared/bytes";
import { connect, type Sql } from "@printshop/shared/db";
import { ROLES, roleUrl, withOrganization } from "@printshop/shared/db/tenancy";

type Json = Record<string, unknown>;
const NO_COSTS = ALL_SCOPES.filter((s) => s !== "costs.read");
const VISIBILITIES = [["with costs.read", undefined], ["without", NO_COSTS]] as const;

/** mulberry32: a small seeded generator, so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Api {
  h: ServiceHarness<Config>;
  org: string;
  call(method: string, path: string, body?: unknown): Promise<Json>;
  /** The `data` of an answer exactly as sent. */
  text(path: string, scopes?: readonly string[]): Promise<string>;
  /** The quote rendered now, ignoring any stored document. */
  live(id: string, costs: boolean): Promise<string>;
}

function api(h: ServiceHarness<Config>): Api {
  const org = crypto.randomUUID();
  return {
    h,
    org,
    call: async (method, path, body) => {
      const res = await h.request(method, path, {
        organizationId: org,
        ...(body === undefined ? {} : { body }),
      });
      const json = await res.json() as Json;
      assert(
        res.status < 300,
        `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(json)}`,
      );
      return (json.data ?? {}) as Json;
    },
    text: async (path, scopes) => {
      const res = await h.request("GET", path, {
        organizationId: org,
        ...(scopes ? { scopes } : {}),
      });
      const text = await res.text();
      assertEquals(res.status, 200, text);
      return text.slice(text.indexOf('"data":') + 7, -1);
    },
    live: async (id, costs) => {
      const [row] = await h.sql<{ json: string }[]>`
        SELECT ${h.sql.unsafe(quoteJsonSql(costs))} AS json FROM quotes q WHERE q.id = ${id}`;
      return row!.json;
    },
  };
}

/** The ids of what a quote holds now, read from its live render. */
interface Shape {
  groups: string[];
  lines: string[];
  garmentLines: string[];
  variants: string[];
  decorations: string[];
  status: string;
  clientId: string | null;
}

async function shapeOf(a: Api, id: string): Promise<Shape> {
  const quote = JSON.parse(await a.live(id, true)) as {
    status: string;
    clientId: string | null;
    groups: {
      id: string;
      lines: { id: string; lineType: string; variants: { id: string }[] }[];
      decorations: { id: string }[];
    }[];
  };
  const lines = quote.groups.flatMap((g) => g.lines);
  return {
    groups: quote.groups.map((g) => g.id),
    lines: lines.map((l) => l.id),
    garmentLines: lines.filter((l) => l.lineType === "Garment").map((l) => l.id),
    variants: lines.flatMap((l) => l.variants.map((v) => v.id)),
    decorations: quote.groups.flatMap((g) => g.decorations.map((d) => d.id)),
    status: quote.status,
    clientId: quote.clientId,
  };
}

type Change = (a: Api, quoteId: string, shape: Shape, pick: <T>(items: T[]) => T) => Promise<
  boolean
>;

/** Changes to a draft's rows; each answers false when the quote has nothing it applies to. */
const ROW_CHANGES: Record<string, Change> = {
  "add a group": async (a, q, _s, pick) => {
    await a.call("POST", `/v1/quotes/${q}/groups`, { name: pick(["Front", "Back", "Caps"]) });
    return true;
  },
  "rename a group": async (a, _q, s, pick) => {
    if (s.groups.length === 0) return false;
    await a.call("PATCH", `/v1/quote-groups/${pick(s.groups)}`, {
      name: pick(["Renamed", 'Quote "this"']),
      rollUpDecoration: pick([true, false]),
    });
    return true;
  },
  "delete a group": async (a, _q, s, pick) => {
    if (s.groups.length === 0) return false;
    await a.call("DELETE", `/v1/quote-groups/${pick(s.groups)}`);
    return true;
  },
  "add a line": async (a, _q, s, pick) => {
    if (s.groups.length === 0) return false;
    await a.call(
      "POST",
      `/v1/quote-groups/${pick(s.groups)}/lines`,
      pick([
        { lineType: "Garment", productName: "Tee" },
        { lineType: "Service", productName: "Folding", quantity: 3, unitPriceExGst: 1.25 },
        { lineType: "Discount", productName: "Loyalty", valueType: "Percentage", percentage: 5 },
      ]),
    );
    return true;
  },
  "edit a line": async (a, _q, s, pick) => {
    if (s.lines.length === 0) return false;
    await a.call("PATCH", `/v1/quote-lines/${pick(s.lines)}`, {
      title: pick(["Staff", null, "Crew\ttees"]),
      sortOrder: 1,
    });
    return true;
  },
  "delete a line": async (a, _q, s, pick) => {
    if (s.lines.length === 0) return false;
    await a.call("DELETE", `/v1/quote-lines/${pick(s.lines)}`);
    return true;
  },
  "add a variant": async (a, _q, s, pick) => {
    if (s.garmentLines.length === 0) return false;
    await a.call("POST", `/v1/quote-lines/${pick(s.garmentLines)}/variants`, {
      size: pick(["S", "M", "L"]),
      quantity: pick([1, 6, 24]),
      buyPrice: pick([3.5, 7.25]),
      markupType: "percentage",
      markupValue: pick([40, 33.3333]),
    });
    return true;
  },
  "change a variant": async (a, q, s, pick) => {
    if (s.variants.length === 0) return false;
    const answered = await a.call("PATCH", `/v1/quote-variants/${pick(s.variants)}`, {
      quantity: pick([2, 12, 50]),
      extraCost: pick([0, 0.5]),
      ...(pick([true, false, false]) ? { sortOrder: 1 } : {}),
    });
    // What the PATCH answers is the variant as the quote now holds it.
    const quote = JSON.parse(await a.live(q, true)) as {
      groups: { lines: { variants: Json[] }[] }[];
    };
    const held = quote.groups.flatMap((g) => g.lines.flatMap((l) => l.variants))
      .find((v) => v.id === answered.id);
    assertEquals(answered, held);
    return true;
  },
  "delete a variant": async (a, _q, s, pick) => {
    if (s.variants.length === 0) return false;
    await a.call("DELETE", `/v1/quote-variants/${pick(s.variants)}`);
    return true;
  },
  "add a decoration": async (a, _q, s, pick) => {
    if (s.groups.length === 0) return false;
    await a.call("POST", `/v1/quote-groups/${pick(s.groups)}/decorations`, {
      quantity: pick([10, 40]),
      method: "ScreenPrinting",
      unitCost: pick([1.2, 0.85]),
      setupCost: 25,
      markupType: "percentage",
      markupValue: 20,
    });
    return true;
  },
  "change a decoration": async (a, _q, s, pick) => {
    if (s.decorations.length === 0) return false;
    await a.call("PATCH", `/v1/quote-decorations/${pick(s.decorations)}`, {
      quantity: pick([5, 100]),
      position: pick(["Left chest", null]),
    });
    return true;
  },
  "delete a decoration": async (a, _q, s, pick) => {
    if (s.decorations.length === 0) return false;
    await a.call("DELETE", `/v1/quote-decorations/${pick(s.decorations)}`);
    return true;
  },
};

/** Changes to the quote itself and to what it shows from elsewhere, at any status. */
const QUOTE_CHANGES: Record<string, Change> = {
  "edit the quote": async (a, q, _s, pick) => {
    await a.call("PATCH", `/v1/quotes/${q}`, {
      notes: pick(["Rush", null, "Two\nlines"]),
      deliveryDate: pick(["2026-12-24", null]),
    });
    return true;
  },
  "send or reopen": async (a, q, s) => {
    await a.call("POST", `/v1/quotes/${q}/status`, {
      status: s.status === "draft" ? "sent" : "draft",
    });
    return true;
  },
  "rename the client": async (a, _q, s, pick) => {
    if (s.clientId === null) return false;
    await applyCustomerFacts(a.h.deps.sql, [{
      organizationId: a.org,
      customerId: s.clientId,
      // A name it never had, so every rename shows.
      name: `${pick(["Acme", "Acme & Sons", 'The "Best" Co'])} ${crypto.randomUUID().slice(0, 4)}`,
      isArchived: false,
      deleted: false,
      occurredAt: new Date().toISOString(),
      eventId: crypto.randomUUID(),
    }]);
    return true;
  },
};

/** Reads every quote as each caller would, one by one and as a list, against the live render. */
async function assertReadsMatch(a: Api, ids: string[], context: string): Promise<void> {
  for (const [visibility, scopes] of VISIBILITIES) {
    const costs = scopes === undefined;
    for (const id of ids) {
      const live = await a.live(id, costs);
      // Twice: the first may render and store, the second must send what was stored.
      assertEquals(await a.text(`/v1/quotes/${id}`, scopes), live, `${context}, ${visibility}`);
      assertEquals(await a.text(`/v1/quotes/${id}`, scopes), live, `${context}, ${visibility}`);
    }
    const page = await a.text(`/v1/quotes?limit=200`, scopes);
    const lives = await Promise.all(
      (JSON.parse(page) as { items: { id: string }[] }).items.map((q) => a.live(q.id, costs)),
    );
    assertEquals(
      page,
      `{"items":[${lives.join(",")}],"totalCount":${ids.length},"hasMore":false}`,
      `${context}, list ${visibility}`,
    );
  }
}

Deno.test("stored quote documents read exactly as the live render, through random changes", async () => {
  const seed = Number(Deno.env.get("DOCUMENTS_SEED") ?? Math.floor(Math.random() * 2 ** 31));
  const next = random(seed);
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
  await using h = await serviceHarness(quotesService);
  const a = api(h);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const quote = await a.call("POST", "/v1/quotes", {
      reference: `Quote ${i}`,
      ...(i % 2 === 0 ? { clientId: crypto.randomUUID() } : {}),
    });
    const id = quote.id as string;
    ids.push(id);
    // Something of every kind, so every change finds what it changes.
    const group = await a.call("POST", `/v1/quotes/${id}/groups`, { name: "Main" });
    const line = await a.call("POST", `/v1/quote-groups/${group.id}/lines`, {
      lineType: "Garment",
      productName: "Tee",
    });
    for (const size of ["M", "L"]) {
      await a.call("POST", `/v1/quote-lines/${line.id}/variants`, {
        size,
        quantity: 5,
        buyPrice: 4,
        markupType: "percentage",
        markupValue: 50,
      });
    }
    await a.call("POST", `/v1/quote-groups/${group.id}/decorations`, {
      quantity: 10,
      method: "ScreenPrinting",
      unitCost: 1,
    });
  }
  // Every kind of change three times, in a random order, each on a random quote.
  const changes = { ...ROW_CHANGES, ...QUOTE_CHANGES };
  const plan = Array.from({ length: 3 }, () => Object.keys(changes)).flat()
    .map((name) => ({ name, order: next() }))
    .sort((x, y) => x.order - y.order)
    .map((p) => p.name);
  const log: string[] = [];
  try {
    await assertReadsMatch(a, ids, "as built");
    for (const [step, name] of plan.entries()) {
      // A random quote first, then the others, until one has what the change needs.
      const first = Math.floor(next() * ids.length);
      for (let k = 0; k < ids.length; k++) {
        const id = ids[(first + k) % ids.length]!;
        let shape = await shapeOf(a, id);
        if (name in ROW_CHANGES && shape.status !== "draft") {
          await a.call("POST", `/v1/quotes/${id}/status`, { status: "draft" });
          log.push(`reopen (${ids.indexOf(id)})`);
          await assertReadsMatch(a, ids, `after step ${step}: reopen`);
          shape = await shapeOf(a, id);
        }
        if (!await changes[name]!(a, id, shape, pick)) continue;
        log.push(`${name} (${ids.indexOf(id)})`);
        await assertReadsMatch(a, ids, `after step ${step}: ${name}`);
        break;
      }
    }
  } catch (error) {
    throw new Error(`seed ${seed}, changes: ${log.join(", ")}`, { cause: error });
  }
  // The run stored documents (it would prove little otherwise).
  const [stored] = await h.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM quotes
    WHERE organization_id = ${a.org} AND document_with_costs IS NOT NULL
      AND document_without_costs IS NOT NULL`;
  assertEquals(stored!.n, ids.length);
});

Deno.test("a document rendered before a change is never stored after it", async () => {
  await using h = await serviceHarness(quotesService);
  const a = api(h);
  const quote = await a.call("POST", "/v1/quotes", { reference: "Race" });
  const id = quote.id as string;
  const read = async (): Promise<ReadDocument> => {
    const [row] = await h.sql<ReadDocument[]>`
      SELECT q.id, ${h.sql.unsafe(quoteJsonSql(true))} AS json, q.xmin::text AS version,
        false AS stored
      FROM quotes q WHERE q.id = ${id}`;
    return row!;
  };
  const stored = async (): Promise<string | null> =>
    (await h.sql<{ document: string | null }[]>`
      SELECT document_with_costs AS document FROM quotes WHERE id = ${id}`)[0]!.document;
  /** As the service stores them: the runtime role, for the quote's organisation. */
  const asShop = <T>(fn: () => Promise<T>): Promise<T> => withOrganization(a.org, fn);

  // A change to the quote's own row, and one to its rows only (a group): each turns the old
  // render away.
  for (
    const change of [
      () => a.call("PATCH", `/v1/quotes/${id}`, { notes: "changed" }),
      () => a.call("POST", `/v1/quotes/${id}/groups`, { name: "New group" }),
    ]
  ) {
    const before = await read();
    await change();
    await asShop(() => rememberDocuments(h.deps.sql, [before], true));
    assertEquals(await stored(), null);
    const after = await read();
    await asShop(() => rememberDocuments(h.deps.sql, [after], true));
    assertEquals(await stored(), after.json);
  }

  // A store never waits for a writer: while a transaction holds the quote, it stores nothing.
  await h.sql`UPDATE quotes SET notes = 'again' WHERE id = ${id}`;
  const current = await read();
  await h.sql.begin(async (tx) => {
    await tx`SELECT 1 FROM quotes WHERE id = ${id} FOR UPDATE`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("the store waited for the writer")), 10_000);
    });
    try {
      await Promise.race([asShop(() => rememberDocuments(h.deps.sql, [current], true)), stuck]);
    } finally {
      clearTimeout(timer);
    }
  });
  assertEquals(await stored(), null);
});

Deno.test("a page of stored documents is streamed as it is read; one missing is rendered", async () => {
  await using h = await serviceHarness(quotesService);
  const a = api(h);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.unshift((await a.call("POST", "/v1/quotes", { reference: `Streamed ${i}` })).id as string);
  }
  const stored = async (): Promise<number> =>
    (await h.sql<{ n: number }[]>`
      SELECT count(document_with_costs)::int AS n FROM quotes WHERE organization_id = ${a.org}`)[0]!
      .n;
  const expected = async (offset = 0): Promise<string> =>
    `{"items":[${
      (await Promise.all(ids.slice(offset).map((id) => a.live(id, true)))).join(",")
    }],"totalCount":3,"hasMore":false}`;
  // The chunks the store gives, read directly.
  const chunks = async (offset = 0): Promise<string[]> => {
    const stream = await withOrganization(
      a.org,
      () => listQuotesJson(h.deps.sql, a.org, { offset }, 200, true),
    );
    return (await Array.fromAsync(stream)).map((c) => new TextDecoder().decode(c));
  };

  // Nothing stored yet: the page is rendered whole, and its documents stored.
  assertEquals(await stored(), 0);
  assertEquals((await chunks()).join(""), await expected());
  assertEquals(await stored(), 3);
  // All stored: the same bytes, the documents in runs as their rows came (three small ones
  // make one), then the statement's end closes the page in a chunk of its own.
  const streamed = await chunks();
  assertEquals(streamed.join(""), await expected());
  assertEquals(streamed.length, 2);
  assertEquals(streamed[1], '],"totalCount":3,"hasMore":false}');
  assertEquals(await a.text("/v1/quotes?limit=200"), await expected());
  // One changed (its document cleared): the page is rendered again, never half-streamed.
  await a.call("PATCH", `/v1/quotes/${ids[1]}`, { notes: "changed" });
  assertEquals(await stored(), 2);
  assertEquals((await chunks()).join(""), await expected());
  assertEquals(await stored(), 3);
  // An offset, and a page past the end, which still carries the count.
  assertEquals((await chunks(1)).join(""), await expected(1));
  assertEquals((await chunks(3)).join(""), '{"items":[],"totalCount":3,"hasMore":false}');
  assertEquals(await a.text("/v1/quotes?offset=5"), '{"items":[],"totalCount":3,"hasMore":false}');
  // Not counted (count=false): no count, and whether a page follows, streamed or rendered.
  assertEquals(
    await a.text("/v1/quotes?limit=2&count=false"),
    `{"items":[${(await Promise.all(ids.slice(0, 2).map((id) => a.live(id, true)))).join(",")}],` +
      `"totalCount":null,"hasMore":true}`,
  );
  assertEquals(
    await a.text("/v1/quotes?offset=3&count=false"),
    '{"items":[],"totalCount":null,"hasMore":false}',
  );
  await a.call("PATCH", `/v1/quotes/${ids[0]}`, { notes: "changed again" });
  assertEquals(
    (await chunks(0)).join("").endsWith('],"totalCount":3,"hasMore":false}'),
    true,
    "rendered again, the tally as streamed",
  );
});

Deno.test("a page larger than a run is streamed in several, each document once and in order", async () => {
  await using h = await serviceHarness(quotesService);
  const a = api(h);
  const ids: string[] = [];
  // 20 KB of UTF-8 each (10,000 two-byte characters): eight make two runs of ~128 KB.
  for (let i = 0; i < 8; i++) {
    const quote = await a.call("POST", "/v1/quotes", {
      reference: `Long ${i}`,
      notes: "é".repeat(10_000),
    });
    ids.unshift(quote.id as string);
  }
  await a.text("/v1/quotes"); // the first read renders and stores them
  const stream = await withOrganization(
    a.org,
    () => listQuotesJson(h.deps.sql, a.org, {}, 200, true),
  );
  const chunks = await Array.fromAsync(stream);
  const lives = await Promise.all(ids.map((id) => a.live(id, true)));
  assertEquals(
    new TextDecoder().decode(concatBytes(chunks)),
    `{"items":[${lives.join(",")}],"totalCount":8,"hasMore":false}`,
  );
  assertEquals(chunks.length, 3, "two runs and the closing chunk");
  assertEquals(
    await a.text("/v1/quotes"),
    `{"items":[${lives.join(",")}],"totalCount":8,"hasMore":false}`,
  );
});

/** 6,000 copies of one quote's row in the shop, analysed: a shop that holds the table. */
async function seedCopies(h: ServiceHarness<Config>, org: string): Promise<void> {
  await h.sql`
    INSERT INTO quotes (id, organization_id, quote_number, quote_ref, reference, created_at)
    SELECT gen_random_uuid(), ${org}, 1000 + n, 'Q-' || (1000 + n), 'Copy ' || n,
      now() - n * interval '1 ms'
    FROM generate_series(1, 6000) AS n`;
  await h.sql`VACUUM ANALYZE quotes`;
}

/**
 * One connection as the service connects, held to the policies, so its prepared statements
 * (pg_prepared_statements) are the ones the calls on it used.
 */
function oneServiceConnection(h: ServiceHarness<Config>): Sql {
  const password = decodeURIComponent(new URL(h.databaseUrl).password);
  return connect(roleUrl(h.databaseUrl, ROLES.app, password), { schema: "quotes", max: 1 });
}

Deno.test("a first page's statement keeps one plan, not planned again on every read", async () => {
  await using h = await serviceHarness(quotesService);
  const a = api(h);
  for (let i = 0; i < 3; i++) await a.call("POST", "/v1/quotes", { reference: `Planned ${i}` });
  // Thousands of quotes, all this shop's (copies of one quote's row). Where one shop holds the
  // table, a plan that cannot see the page's size (a parameter) costs the page as a tenth of the
  // shop's quotes, and always loses to planning afresh.
  await seedCopies(h, a.org);
  const conn = oneServiceConnection(h);
  try {
    const read = async (limit: number): Promise<void> => {
      await Array.fromAsync(
        await withOrganization(a.org, () => listQuotesJson(conn, a.org, { limit }, 200, true)),
      );
    };
    for (let i = 0; i < 12; i++) await read(20);
    for (let i = 0; i < 12; i++) await read(50);
    const plans = await conn<{ generic: number; custom: number }[]>`
      SELECT generic_plans::int AS generic, custom_plans::int AS custom
      FROM pg_prepared_statements
      WHERE statement LIKE '%WITH page AS MATERIALIZED%' AND statement NOT LIKE '%pg_prepared%'
      ORDER BY prepare_time`;
    // Each page size's statement ran 12 times (the first read then rendered, in another): planned
    // for its first five, then PostgreSQL keeps its generic plan.
    assertEquals(plans.length, 2, `one statement per page size: ${JSON.stringify(plans)}`);
    for (const { generic, custom } of plans) {
      assertEquals(custom, 5, "custom plans");
      assertEquals(generic >= 6, true, `generic plans: ${generic}`);
    }
  } finally {
    await conn.end();
  }
});

Deno.test("a quote's document statement keeps one plan: a write that answers and announces a quote plans it no more", async () => {
  await using h = await serviceHarness(quotesService);
  const a = api(h);
  const quote = await a.call("POST", "/v1/quotes", { reference: "Planned once" });
  // Thousands of this shop's quotes, analysed: planned for the values, the statement looked
  // cheaper than the plan kept for any values, and was planned afresh every time.
  await seedCopies(h, a.org);
  const conn = oneServiceConnection(h);
  try {
    for (let i = 0; i < 12; i++) {
      const json = await withOrganization(
        a.org,
        () => updateQuote(conn, a.org, quote.id as string, { notes: `Patched ${i}` }, true),
      );
      assertEquals(JSON.parse(json).notes, `Patched ${i}`);
    }
    // The answer (as the caller may see it) and the event's payload (with costs): two statements.
    const plans = await conn<{ generic: number; custom: number }[]>`
      SELECT generic_plans::int AS generic, custom_plans::int AS custom
      FROM pg_prepared_statements
      WHERE statement LIKE '%AS stored%' AND statement NOT LIKE '%pg_prepared%'`;
    assert(plans.length > 0, "the document statements were prepared");
    for (const { generic, custom } of plans) {
      assert(custom <= 5, `planned afresh ${custom} times`);
      assert(generic >= 6, `kept plan used ${generic} times`);
    }
  } finally {
    await conn.end();
  }
});
