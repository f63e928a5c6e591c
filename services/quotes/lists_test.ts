/**
 * GET /v1/quotes as an integrator uses it: the filter language (api-conventions.md, Filter
 * language) alone and combined with search and the named filters, refusals naming `filters…`,
 * search over ref, reference, notes and client id, nested groups → lines → variants and
 * decorations on every item, stable sorting across pages, a statement count that does not grow
 * with the page (no N+1), the sales-rep facet, and cost fields hidden without costs.read.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { pinnedOrganizations } from "@printshop/shared/db";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { QUOTE_SORT_FIELDS } from "@printshop/shared/contracts/quotes";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";
import { COSTS_READ_FIELDS } from "@printshop/shared/costs";

type Json = Record<string, unknown>;

interface Quote {
  id: string;
  quoteRef: string;
  status: string;
  reference: string | null;
  notes: string | null;
  clientId: string | null;
  salesRepEmail: string | null;
  deliveryDate: string | null;
  totalIncGst: number;
  createdAt: string;
  updatedAt: string;
  groups: Json[];
  [key: string]: unknown;
}

interface Page {
  items: Quote[];
  totalCount: number | null;
  hasMore: boolean;
}

interface Detail {
  path: string;
  message: string;
}

const NO_COSTS = ALL_SCOPES.filter((s) => s !== "costs.read");

interface Api {
  h: ServiceHarness<Config>;
  org: string;
  /** SQL statements run so far, by anything on this harness. */
  statements(): number;
  send(
    path: string,
    options?: { org?: string; scopes?: readonly string[] },
  ): Promise<{ status: number; json: Json }>;
  call(method: string, path: string, body?: unknown): Promise<Json>;
  list(query?: string, scopes?: readonly string[]): Promise<Page>;
}

async function api(): Promise<Api> {
  let statements = 0;
  const h = await serviceHarness(quotesService, {
    onQuery: () => {
      statements++;
    },
  });
  const org = crypto.randomUUID();
  const send: Api["send"] = async (path, options = {}) => {
    const res = await h.request("GET", path, {
      organizationId: options.org ?? org,
      ...(options.scopes ? { scopes: options.scopes } : {}),
    });
    return { status: res.status, json: await res.json() as Json };
  };
  return {
    h,
    org,
    statements: () => statements,
    send,
    call: async (method, path, body) => {
      const res = await h.request(method, path, {
        organizationId: org,
        ...(body === undefined ? {} : { body }),
      });
      const json = await res.json() as Json;
      assert(
        res.status === 200 || res.status === 201,
        `${method} ${path}: ${JSON.stringify(json)}`,
      );
      return json.data as Json;
    },
    list: async (query = "", scopes) => {
      const { status, json } = await send(`/v1/quotes${query}`, scopes ? { scopes } : {});
      assertEquals(status, 200, `GET /v1/quotes${query}: ${JSON.stringify(json)}`);
      return json.data as Page;
    },
  };
}

const CLIENTS = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
const REFERENCES = ["Staff uniforms", "Fun run tees", "Hi-vis 50% vests", "Caps_and_hats", null];
const REPS = ["zed@shop.test", "amy@shop.test", null, "bob@shop.test"];
const NOTES = ["Rush job for the fair", null, "Deliver to the back door", null, "Uniform refresh"];
const QUOTES = 26;

/**
 * 26 quotes, each with a group, a Garment line with two variants and a decoration; clients,
 * references, reps, notes, dates (some equal, some absent), totals (some equal) and statuses
 * (draft, sent, approved) vary so every filter and sort has ties and misses.
 */
async function buildQuotes(a: Api): Promise<Quote[]> {
  for (let i = 0; i < QUOTES; i++) {
    const quote = await a.call("POST", "/v1/quotes", {
      reference: REFERENCES[i % REFERENCES.length],
      clientId: i % 4 === 3 ? null : CLIENTS[i % CLIENTS.length],
      salesRepEmail: REPS[i % REPS.length],
      notes: NOTES[i % NOTES.length],
      deliveryDate: i % 6 === 0 ? null : `2026-12-${String((i % 9) + 1).padStart(2, "0")}`,
    });
    const group = await a.call("POST", `/v1/quotes/${quote.id}/groups`, { name: `Group ${i}` });
    const line = await a.call("POST", `/v1/quote-groups/${group.id}/lines`, {
      lineType: "Garment",
      productName: "Classic tee",
    });
    const quantity = (i % 7) + 1;
    for (const size of ["M", "L"]) {
      await a.call("POST", `/v1/quote-lines/${line.id}/variants`, {
        size,
        colour: "Black",
        quantity,
        buyPrice: 2,
        extraCost: 0.5,
        markupType: "fixed",
        markupValue: 0.5,
      });
    }
    await a.call("POST", `/v1/quote-groups/${group.id}/decorations`, {
      quantity: quantity * 2,
      unitCost: 1,
      markupType: "percentage",
      markupValue: 0,
      position: "Front",
    });
    if (i % 5 === 1 || i % 5 === 2) {
      await a.call("POST", `/v1/quotes/${quote.id}/status`, { status: "sent" });
    }
    if (i % 5 === 2) await a.call("POST", `/v1/quotes/${quote.id}/status`, { status: "approved" });
  }
  // Another organisation's quote, which no list of ours may show.
  await a.h.request("POST", "/v1/quotes", {
    body: { reference: "Staff uniforms", salesRepEmail: "spy@other.test" },
    organizationId: crypto.randomUUID(),
  });
  const all = await a.list("?limit=200");
  assertEquals(all.totalCount, QUOTES);
  return all.items;
}

const ids = (quotes: readonly Quote[]): string[] => quotes.map((q) => q.id).sort();

const filtersParam = (filters: unknown): string =>
  `filters=${encodeURIComponent(JSON.stringify(filters))}`;

/** ILIKE %term% over ref, reference, notes and client id, as the list searches. */
function matchesSearch(q: Quote, term: string): boolean {
  const needle = term.toLowerCase();
  return [q.quoteRef, q.reference, q.notes, q.clientId].some((v) =>
    v !== null && v.toLowerCase().includes(needle)
  );
}

/** Every key of every object nested in `value`. */
function keysIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => keysIn(v, into));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      keysIn(v, into);
    }
  }
  return into;
}

interface StepContext {
  t: Deno.TestContext;
  a: Api;
  all: Quote[];
}

/**
 * The checks below share one data set (building it through the API is the slow part), so they
 * run as steps of one test that builds it once and closes the harness at the end.
 */
const STEPS: [string, (context: StepContext) => Promise<void>][] = [];
function step(name: string, fn: (context: StepContext) => Promise<void>): void {
  STEPS.push([name, fn]);
}

step(
  "GET /v1/quotes: each filter op on its field returns exactly the matching quotes",
  async ({ t, a, all }: StepContext) => {
    const threshold = [...new Set(all.map((q) => q.totalIncGst))].sort((x, y) => x - y)[3]!;
    const cases: [string, unknown[], (q: Quote) => boolean][] = [
      [
        "status eq sent",
        [{ field: "status", op: "eq", value: "sent" }],
        (q) => q.status === "sent",
      ],
      ["status in sent, approved", [{
        field: "status",
        op: "in",
        values: ["sent", "approved"],
      }], (q) => q.status === "sent" || q.status === "approved"],
      [
        "status ne draft",
        [{ field: "status", op: "ne", value: "draft" }],
        (q) => q.status !== "draft",
      ],
      [`totalIncGst gte ${threshold}`, [{ field: "totalIncGst", op: "gte", value: threshold }], (
        q,
      ) => q.totalIncGst >= threshold],
      [`totalIncGst lt ${threshold}`, [{ field: "totalIncGst", op: "lt", value: threshold }], (
        q,
      ) => q.totalIncGst < threshold],
      ["deliveryDate between 2026-12-03 and 2026-12-06", [{
        field: "deliveryDate",
        op: "between",
        from: "2026-12-03",
        to: "2026-12-06",
      }], (q) =>
        q.deliveryDate !== null && q.deliveryDate >= "2026-12-03" &&
        q.deliveryDate <= "2026-12-06"],
      [
        "deliveryDate isNull",
        [{ field: "deliveryDate", op: "isNull" }],
        (q) => q.deliveryDate === null,
      ],
      ["reference contains UNIFORMS (case-insensitive)", [{
        field: "reference",
        op: "contains",
        value: "UNIFORMS",
      }], (q) => q.reference === "Staff uniforms"],
      ['reference contains "50%" (a literal percent sign)', [{
        field: "reference",
        op: "contains",
        value: "50%",
      }], (q) => q.reference === "Hi-vis 50% vests"],
      ['reference contains "_and_" (a literal underscore)', [{
        field: "reference",
        op: "contains",
        value: "s_and_h",
      }], (q) => q.reference === "Caps_and_hats"],
      [
        "reference startsWith fun",
        [{ field: "reference", op: "startsWith", value: "fun" }],
        (q) => q.reference === "Fun run tees",
      ],
      ["clientId in two clients", [{
        field: "clientId",
        op: "in",
        values: [CLIENTS[0], CLIENTS[2]!.toUpperCase()],
      }], (q) => q.clientId === CLIENTS[0] || q.clientId === CLIENTS[2]],
      ["clientId nin one client (absent clients included)", [{
        field: "clientId",
        op: "nin",
        values: [CLIENTS[1]],
      }], (q) => q.clientId !== CLIENTS[1]],
      ["two filters are ANDed", [
        { field: "status", op: "eq", value: "draft" },
        { field: "deliveryDate", op: "isNotNull" },
      ], (q) => q.status === "draft" && q.deliveryDate !== null],
      ["an empty filter list filters nothing", [], () => true],
    ];
    for (const [name, filters, predicate] of cases) {
      await t.step(name, async () => {
        const expected = all.filter(predicate);
        const page = await a.list(`?limit=200&${filtersParam(filters)}`);
        assertEquals(ids(page.items), ids(expected));
        assertEquals(page.totalCount, expected.length);
        if (filters.length > 0) {
          assert(expected.length > 0 && expected.length < all.length, `${name} must discriminate`);
        }
      });
    }
  },
);

step(
  "GET /v1/quotes: filters combine with search, the named filters and paging",
  async ({ t, a, all }: StepContext) => {
    const threshold = [...new Set(all.map((q) => q.totalIncGst))].sort((x, y) => x - y)[2]!;
    const totalFilter = { field: "totalIncGst", op: "gte", value: threshold };
    const cases: [string, string, (q: Quote) => boolean][] = [
      [
        "filters + search",
        `search=tees&${filtersParam([totalFilter])}`,
        (q) => matchesSearch(q, "tees") && q.totalIncGst >= threshold,
      ],
      [
        "filters + named status",
        `status=draft&${
          filtersParam([{
            field: "deliveryDate",
            op: "between",
            from: "2026-12-02",
            to: "2026-12-08",
          }])
        }`,
        (q) =>
          q.status === "draft" && q.deliveryDate !== null && q.deliveryDate >= "2026-12-02" &&
          q.deliveryDate <= "2026-12-08",
      ],
      [
        "filters + named clientId + search",
        `clientId=${CLIENTS[0]}&search=uniform&${filtersParam([totalFilter])}`,
        (q) =>
          q.clientId === CLIENTS[0] && matchesSearch(q, "uniform") && q.totalIncGst >= threshold,
      ],
      [
        "named filter and a filter on the same field that disagree",
        `status=draft&${filtersParam([{ field: "status", op: "eq", value: "sent" }])}`,
        () => false,
      ],
      [
        "every kind at once",
        `status=sent&clientId=${CLIENTS[1]}&search=Q-000&${
          filtersParam([
            { field: "status", op: "in", values: ["sent", "approved"] },
            { field: "reference", op: "isNotNull" },
          ])
        }`,
        (q) =>
          q.status === "sent" && q.clientId === CLIENTS[1] && matchesSearch(q, "Q-000") &&
          q.reference !== null,
      ],
    ];
    for (const [name, query, predicate] of cases) {
      await t.step(name, async () => {
        const expected = all.filter(predicate);
        const page = await a.list(`?limit=200&${query}`);
        assertEquals(ids(page.items), ids(expected));
        assertEquals(page.totalCount, expected.length);
        // Paged, the same rows come back and every page counts all of them; uncounted
        // (count=false), the same pages with no count, and each says whether more follow.
        const paged: Quote[] = [];
        for (let offset = 0; offset < expected.length + 2; offset += 2) {
          const part = await a.list(`?limit=2&offset=${offset}&${query}`);
          assertEquals(part.totalCount, expected.length);
          assertEquals(part.hasMore, offset + 2 < expected.length);
          const uncounted = await a.list(`?limit=2&offset=${offset}&count=false&${query}`);
          assertEquals(uncounted.totalCount, null);
          assertEquals(uncounted.hasMore, part.hasMore);
          assertEquals(ids(uncounted.items), ids(part.items));
          paged.push(...part.items);
        }
        assertEquals(ids(paged), ids(expected));
      });
    }
  },
);

step(
  "GET /v1/quotes refuses bad filters with 400 naming filters…",
  async ({ t, a }: StepContext) => {
    const cases: [string, string, string][] = [
      ["not JSON", "filters=%7Bnope", "filters"],
      [
        "JSON that is not an array",
        filtersParam({ field: "status", op: "eq", value: "x" }),
        "filters",
      ],
      ["an array of strings", filtersParam(["status"]), "filters.0"],
      [
        "an unknown field",
        filtersParam([{ field: "password", op: "eq", value: "x" }]),
        "filters.0.field",
      ],
      [
        "the tenant column",
        filtersParam([{ field: "organizationId", op: "eq", value: crypto.randomUUID() }]),
        "filters.0.field",
      ],
      [
        "an unknown op",
        filtersParam([{ field: "status", op: "like", value: "x" }]),
        "filters.0.op",
      ],
      [
        "an op the field's type does not allow",
        filtersParam([{ field: "totalIncGst", op: "contains", value: "1" }]),
        "filters.0.op",
      ],
      [
        "a string for a number",
        filtersParam([{ field: "totalIncGst", op: "gte", value: "100" }]),
        "filters.0.value",
      ],
      [
        "a number for a date",
        filtersParam([{ field: "deliveryDate", op: "between", from: 20261201, to: "2026-12-31" }]),
        "filters.0.from",
      ],
      [
        "an impossible date",
        filtersParam([{
          field: "deliveryDate",
          op: "between",
          from: "2026-12-01",
          to: "2026-02-30",
        }]),
        "filters.0.to",
      ],
      [
        "a status that does not exist",
        filtersParam([{ field: "status", op: "eq", value: "paid" }]),
        "filters.0.value",
      ],
      [
        "a client id that is not a UUID",
        filtersParam([{ field: "clientId", op: "in", values: ["client-1"] }]),
        "filters.0.values.0",
      ],
      [
        "between without to",
        filtersParam([{ field: "deliveryDate", op: "between", from: "2026-12-01" }]),
        "filters.0.to",
      ],
      [
        "value where the op takes values",
        filtersParam([{ field: "clientId", op: "in", value: CLIENTS[0] }]),
        "filters.0.value",
      ],
      [
        "in with no values",
        filtersParam([{ field: "status", op: "in", values: [] }]),
        "filters.0.values",
      ],
      [
        "an unknown key in a filter",
        filtersParam([{ field: "status", op: "eq", value: "draft", negate: true }]),
        "filters.0.negate",
      ],
      [
        "the second filter is the bad one",
        filtersParam([
          { field: "status", op: "eq", value: "draft" },
          { field: "colour", op: "eq", value: "red" },
        ]),
        "filters.1.field",
      ],
      ["filters given twice", `${filtersParam([])}&${filtersParam([])}`, "filters"],
    ];
    for (const [name, query, path] of cases) {
      await t.step(name, async () => {
        const { status, json } = await a.send(`/v1/quotes?${query}`);
        const shown = JSON.stringify(json);
        assertEquals(status, 400, shown);
        assertEquals([json.error, json.status], ["validation_error", false], shown);
        const details = json.details as Detail[];
        assert(details.every((d) => d.path.startsWith("filters")), `only filters…: ${shown}`);
        assert(details.some((d) => d.path === path), `a detail names "${path}": ${shown}`);
        assert(String(json.message).includes("filters"), `the message names filters: ${shown}`);
      });
    }
  },
);

step(
  "GET /v1/quotes search matches ref, reference, notes and client id, case-insensitively",
  async ({ t, a, all }: StepContext) => {
    const withRef = all.find((q) => q.quoteRef.endsWith("17"))!;
    const cases: [string, string, string[]][] = [
      ["a quote ref", withRef.quoteRef, [withRef.id]],
      ["a quote ref, lower case", withRef.quoteRef.toLowerCase(), [withRef.id]],
      ["part of a reference", "FUN RUN", ids(all.filter((q) => q.reference === "Fun run tees"))],
      ["part of the notes", "back door", ids(all.filter((q) => q.notes?.includes("back door")))],
      ["a whole client id", CLIENTS[1]!, ids(all.filter((q) => q.clientId === CLIENTS[1]))],
      [
        "the start of a client id",
        CLIENTS[2]!.slice(0, 13).toUpperCase(),
        ids(all.filter((q) => q.clientId === CLIENTS[2])),
      ],
      [
        "a word in both references and notes",
        "uniform",
        ids(all.filter((q) => q.reference === "Staff uniforms" || q.notes === "Uniform refresh")),
      ],
      ["a literal percent sign", "50%", ids(all.filter((q) => q.reference === "Hi-vis 50% vests"))],
      ["a literal underscore", "_", ids(all.filter((q) => q.reference === "Caps_and_hats"))],
      ["nothing", "no such words", []],
      ["only spaces (no search)", "   ", ids(all)],
    ];
    for (const [name, term, expected] of cases) {
      await t.step(name, async () => {
        assertEquals(
          ids(all.filter((q) => term.trim() === "" || matchesSearch(q, term.trim()))),
          [
            ...expected,
          ].sort(),
          "the model agrees with the expectation",
        );
        const page = await a.list(`?limit=200&search=${encodeURIComponent(term)}`);
        assertEquals(ids(page.items), [...expected].sort());
        assertEquals(page.totalCount, expected.length);
      });
    }
    const shared = await a.send(`/v1/quotes?search=${encodeURIComponent("Staff uniforms")}`, {
      org: crypto.randomUUID(),
    });
    assertEquals((shared.json.data as Page).totalCount, 0, "another organisation finds none");
  },
);

step(
  "GET /v1/quotes items carry their groups, lines, variants and decorations as GET shows them",
  async ({ a, all }: StepContext) => {
    for (const query of ["?limit=200", "?limit=2&offset=5", "?limit=3&sortField=totalIncGst"]) {
      const page = await a.list(query);
      assert(page.items.length > 0);
      for (const item of page.items) {
        const group = item.groups[0]!;
        assertEquals(item.groups.length, 1, `${item.quoteRef} has one group`);
        const lines = group.lines as Json[];
        assertEquals(lines.length, 1);
        assertEquals((lines[0]!.variants as Json[]).map((v) => v.size), ["M", "L"]);
        assertEquals((group.decorations as Json[]).length, 1);
        assertEquals(group.quoteId, item.id);
        assertEquals(lines[0]!.quoteGroupId, group.id);
        assertEquals(item, await a.call("GET", `/v1/quotes/${item.id}`), "as GET shows it");
      }
    }
    assertEquals(all.length, QUOTES);
  },
);

/** Checks `items` are ordered by `field` (then id) in `direction`; nulls form one block at an end. */
function assertSorted(items: readonly Quote[], field: string, direction: "asc" | "desc"): void {
  const value = (q: Quote): string | number | null => {
    const v = field === "quoteRef" ? Number(q.quoteRef.slice(2)) : q[field];
    return v === null || v === undefined ? null : v as string | number;
  };
  const sign = direction === "asc" ? 1 : -1;
  const nonNull = items.filter((q) => value(q) !== null);
  const nulls = items.filter((q) => value(q) === null);
  const nullsFirst = nulls.length > 0 && value(items[0]!) === null;
  assertEquals(
    items.map((q) => q.id),
    (nullsFirst ? [...nulls, ...nonNull] : [...nonNull, ...nulls]).map((q) => q.id),
    `${field} ${direction}: the rows without a value are together at one end`,
  );
  const ordered = (x: Quote, y: Quote): boolean => {
    const [vx, vy] = [value(x), value(y)];
    if (vx !== vy && vx !== null && vy !== null) return (vx < vy ? -1 : 1) * sign < 0;
    return (x.id < y.id ? -1 : 1) * sign < 0;
  };
  for (const block of [nonNull, nulls]) {
    for (let i = 1; i < block.length; i++) {
      assert(
        ordered(block[i - 1]!, block[i]!),
        `${field} ${direction}: ${JSON.stringify(value(block[i - 1]!))} (${block[i - 1]!.id}) ` +
          `before ${JSON.stringify(value(block[i]!))} (${block[i]!.id})`,
      );
    }
  }
}

step(
  "GET /v1/quotes sorts by every sortField both ways, ties by id, the same across pages",
  async ({ t, a, all }: StepContext) => {
    const combos: [string, "asc" | "desc", string][] = [["createdAt", "desc", ""]];
    for (const field of QUOTE_SORT_FIELDS) {
      for (const direction of ["asc", "desc"] as const) {
        combos.push([field, direction, `&sortField=${field}&sortDirection=${direction}`]);
      }
    }
    for (const [field, direction, query] of combos) {
      await t.step(
        query === "" ? "the default order (createdAt desc)" : `${field} ${direction}`,
        async () => {
          const whole = await a.list(`?limit=200${query}`);
          assertEquals(whole.items.length, QUOTES);
          assertSorted(whole.items, field, direction);
          const paged: Quote[] = [];
          for (let offset = 0; offset < QUOTES; offset += 3) {
            const page = await a.list(`?limit=3&offset=${offset}${query}`);
            assertEquals(page.totalCount, QUOTES);
            paged.push(...page.items);
          }
          assertEquals(
            paged.map((q) => q.id),
            whole.items.map((q) => q.id),
            "pages = one big page",
          );
          assertEquals(
            (await a.list(`?limit=200${query}`)).items.map((q) => q.id),
            whole.items.map((q) => q.id),
            "the same request, the same order",
          );
        },
      );
    }
    // The ties the data set promises, so the id tie-breaker is really exercised.
    const counts = (key: (q: Quote) => unknown) => new Set(all.map(key)).size < all.length;
    assert(
      counts((q) => q.status) && counts((q) => q.totalIncGst) && counts((q) => q.deliveryDate),
    );
    assert(counts((q) => q.reference));
  },
);

step(
  "GET /v1/quotes runs the same number of SQL statements for 2 quotes as for 20 (no N+1)",
  async ({ t, a }: StepContext) => {
    const count = async (query: string, scopes?: readonly string[]): Promise<number> => {
      const before = a.statements();
      const page = await a.list(query, scopes);
      const used = a.statements() - before;
      assert(page.items.length > 0, `${query} returns quotes`);
      return used;
    };
    /** Statements of a read that renders every quote (and stores it), then of one that need not. */
    const counts = async (query: string, scopes?: readonly string[]): Promise<number[]> => {
      await a.h.sql`UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
        WHERE organization_id = ${a.org}`;
      return [await count(query, scopes), await count(query, scopes)];
    };
    const variants: [string, string, (readonly string[])?][] = [
      ["plain", ""],
      ["sorted", "&sortField=totalIncGst&sortDirection=desc"],
      [
        "searched and filtered",
        `&search=Q-&${filtersParam([{ field: "totalIncGst", op: "gte", value: 0 }])}`,
      ],
      ["without costs.read", "", NO_COSTS],
    ];
    for (const [name, query, scopes] of variants) {
      await t.step(name, async () => {
        const two = await counts(`?limit=2${query}`, scopes);
        const twenty = await counts(`?limit=20${query}`, scopes);
        const whole = await counts(`?limit=200${query}`, scopes);
        assertEquals(twenty, two, `limit=20 ran ${twenty} statements, limit=2 ran ${two}`);
        assertEquals(whole, two, `limit=200 ran ${whole} statements, limit=2 ran ${two}`);
        // The organisation reads and writes on connections pinned to it
        // (shared/db/pinned_pools.ts): a read, and the store's one statement, is that statement
        // alone. A search plans afresh, which takes a transaction naming the organisation to the
        // policies: a BEGIN and a COMMIT that go out with its statements (no round trip of their
        // own), counted here too.
        assert(pinnedOrganizations(a.h.deps.sql).includes(a.org));
        const around = name === "searched and filtered" ? 2 : 0;
        const [rendering, stored] = two as [number, number];
        assertEquals(stored, 1 + around, "stored documents: count, page ids and documents in one");
        assertEquals(
          rendering,
          (1 + around) * 2 + 1,
          "then the page again with the missing rendered, in a read of its own, and its store",
        );
      });
    }
  },
);

step(
  "GET /v1/quotes/facets returns this organisation's distinct sales rep emails, sorted",
  async ({ a, all }: StepContext) => {
    const expected = [...new Set(all.map((q) => q.salesRepEmail).filter((e) => e !== null))]
      .sort();
    assertEquals(expected, ["amy@shop.test", "bob@shop.test", "zed@shop.test"]);
    const { status, json } = await a.send("/v1/quotes/facets");
    assertEquals(status, 200, JSON.stringify(json));
    assertEquals(json.data, { salesReps: expected });
    const other = await a.send("/v1/quotes/facets", { org: crypto.randomUUID() });
    assertEquals(other.json.data, { salesReps: [] });
  },
);

step(
  "GET /v1/quotes without costs.read has no cost or margin field anywhere; with it, every row has them",
  async ({ a }: StepContext) => {
    const hidden = await a.list("?limit=200", NO_COSTS);
    assertEquals(hidden.items.length, QUOTES);
    const keys = keysIn(hidden);
    assertEquals(COSTS_READ_FIELDS.filter((f) => keys.has(f)), [], "no cost or margin field");
    assert(keys.has("unitPriceExGst") && keys.has("baseUnitCost"), "sell prices are still there");

    const shown = await a.list("?limit=200");
    for (const quote of shown.items) {
      for (const group of quote.groups) {
        for (const line of group.lines as Json[]) {
          for (const variant of line.variants as Json[]) {
            assertEquals([typeof variant.buyPrice, typeof variant.extraCost], ["number", "number"]);
          }
        }
        for (const decoration of group.decorations as Json[]) {
          assertEquals([typeof decoration.setupCost, typeof decoration.unitCost], [
            "number",
            "number",
          ]);
        }
      }
    }
    // Apart from the cost fields, the two lists are the same.
    const strip = (value: unknown): unknown =>
      JSON.parse(
        JSON.stringify(value),
        (k, v) => ((COSTS_READ_FIELDS as readonly string[]).includes(k) ? undefined : v),
      );
    assertEquals(strip(shown), hidden);
  },
);

Deno.test("GET /v1/quotes over 26 quotes with groups, lines, variants and decorations", async (t) => {
  const a = await api();
  try {
    const all = await buildQuotes(a);
    for (const [name, fn] of STEPS) {
      await t.step(name, (t) => fn({ t, a, all }));
    }
  } finally {
    await a.h.close();
  }
});

Deno.test("a page is read in one snapshot: a quote changing meanwhile never shows on a page its filter excludes", async () => {
  const a = await api();
  try {
    const quotes: Json[] = [];
    for (let i = 0; i < 60; i++) {
      quotes.push(await a.call("POST", "/v1/quotes", { reference: `Snapshot ${i}` }));
    }
    // Long and short pages, documents stored (the first read of each stores them).
    const queries = ["?status=draft&limit=60", "?status=draft&limit=20&offset=40"];
    for (const query of queries) await a.list(query);
    let moving = true;
    const mover = (async () => {
      // One quote goes to sent and back while the pages are read.
      const path = `/v1/quotes/${quotes[50]!.id}/status`;
      while (moving) {
        await a.call("POST", path, { status: "sent", sentToEmail: "buyer@shop.test" });
        await a.call("POST", path, { status: "draft" });
      }
    })();
    let pages = 0;
    try {
      for (let round = 0; round < 100; round++) {
        for (const query of queries) {
          const page = await a.list(query);
          pages++;
          const strays = page.items.filter((q) => q.status !== "draft").map((q) => q.quoteRef);
          assertEquals(strays, [], `GET /v1/quotes${query} (page ${pages})`);
        }
      }
    } finally {
      moving = false;
      await mover;
    }
  } finally {
    await a.h.close();
  }
});
