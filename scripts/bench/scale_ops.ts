/**
 * The scale bench's operations and how one is measured at one size: a plan (its name, its kind,
 * which sets its goal) prepares a sampler on the database as it is now (the rows it ranges
 * over, the ids or cursor it needs), which is called untimed `warmup` times and then `samples`
 * times in sequence, each call timed from the request to the answer's last byte.
 *
 * The read plans come from the contracts (scale_lists.ts): the first page of every paged list
 * with its default order, each `sortField` both ways and each named filter; `search` with a term
 * taken from the data; a page 1,000 pages in of every offset list that holds thousands of rows;
 * the last page of a walk of every cursor list and the event feed; each facets operation; and
 * GET by id under every list. Filter values and search terms are chosen once, at ×1, from the
 * list's own first rows, and kept for the larger sizes.
 */
import type { ScaleSize } from "./scale_sizes.ts";
import { facetRoutes, getByIdRoutes, type ListRoute, listRoutes } from "./scale_lists.ts";
import { latencyFigures } from "./stats.ts";

/** What sets an operation's goal (scale_report.ts). */
export type OperationKind =
  | "control"
  | "first-page"
  | "search"
  | "facets"
  | "offset-far"
  | "cursor-last"
  | "get"
  | "write"
  | "bulk"
  | "fanout";

/** Page size of every first page. */
export const PAGE = 20;
/** The far offset page: FAR_PAGES pages of FAR_LIMIT in. */
export const FAR_LIMIT = 10;
export const FAR_PAGES = 1_000;
/** Page size of a walk to the last page of a cursor list or the feed (PAGE_SIZE_MAX). */
export const WALK_LIMIT = 200;

export interface Sampler {
  /**
   * The rows the operation ranges over at this size (its list's matches, its table's rows); read
   * once the samples are taken, so a sample may fill it in from an answer.
   */
  rows: number;
  warmup: number;
  samples: number;
  /** One call, `i` counting from 0 over warm-up and samples; answers its milliseconds. */
  sample(i: number): Promise<number>;
  /** Undoes what the samples left (subscriptions made for the operation, say). */
  finish?(): Promise<void>;
  /** What this size's measurement used (an offset, how many ids). */
  note?: string;
}

export interface SizeContext {
  gatewayUrl: string;
  headers: Record<string, string>;
  size: ScaleSize;
  /** Sequential samples of each operation, and untimed calls before them. */
  samples: number;
  warmup: number;
  /** Seconds an operation may take at one size before its samples are cut (MIN_SAMPLES kept). */
  budgetSeconds: number;
  /** Each list's rows at this size, by path: totalCount, or a walk's count for a cursor. */
  totals: Map<string, number>;
  /** The last page of each cursor list's and the feed's walk at this size, by path. */
  lastPages: Map<string, string>;
  /** The parent of each nested list, by path parameter (`garmentVariantId`, `webhookId`). */
  parents: Readonly<Record<string, string>>;
  /**
   * The paired read, timed after every sample of every operation: one that reads the same row
   * at every size, so its p50 beside an operation's is the machine's pace while that operation
   * was measured (this box is shared, and its speed drifts within minutes).
   */
  paired?: () => Promise<number>;
}

export interface OperationPlan {
  name: string;
  kind: OperationKind;
  /** A first page whose list answers totalCount: its goal depends on whether its rows grow. */
  counted?: boolean;
  prepare(ctx: SizeContext): Promise<Sampler>;
}

export interface SizeFigures {
  rows: number;
  p50: number;
  p99: number;
  samples: number;
  /** The paired read's p50 over the same minutes (SizeContext.paired). */
  pairedP50?: number;
  note?: string;
  error?: string;
}

/** An answer of an expected status: its text and how long it took to its last byte. */
export async function timedCall(
  url: string,
  init: { method?: string; headers: Record<string, string>; body?: unknown },
  expect: number | readonly number[] = 200,
): Promise<{ ms: number; text: string }> {
  const method = init.method ?? "GET";
  const started = performance.now();
  const res = await fetch(url, {
    method,
    headers: init.body === undefined
      ? init.headers
      : { ...init.headers, "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const bytes = await res.arrayBuffer();
  const ms = performance.now() - started;
  const text = new TextDecoder().decode(bytes);
  const expected = typeof expect === "number" ? [expect] : expect;
  if (!expected.includes(res.status)) {
    throw new Error(
      `${method} ${new URL(url).pathname}${new URL(url).search} answered ` +
        `${res.status}: ${text.slice(0, 400)}`,
    );
  }
  return { ms, text };
}

/** The envelope's data of a JSON answer. */
export function dataOf<T>(text: string): T {
  return (JSON.parse(text) as { data: T }).data;
}

/** Samples an operation gets however slow it is (or all it asks for, if fewer). */
export const MIN_SAMPLES = 10;

/**
 * Measures `plan` at this size: prepare, warm up, then its samples in sequence. An operation
 * that takes long is cut short to keep the run within its half hour: its warm-up stops once it
 * has used a quarter of `ctx.budgetSeconds`, and its samples once the budget is spent and
 * MIN_SAMPLES are taken (the count taken is in the details).
 */
export async function measure(plan: OperationPlan, ctx: SizeContext): Promise<SizeFigures> {
  let sampler: Sampler | null = null;
  try {
    sampler = await plan.prepare(ctx);
    const started = performance.now();
    const spent = (): number => (performance.now() - started) / 1000;
    let calls = 0;
    while (calls < sampler.warmup && (calls === 0 || spent() < ctx.budgetSeconds / 4)) {
      await sampler.sample(calls++);
    }
    const least = Math.min(MIN_SAMPLES, sampler.samples);
    const times: number[] = [];
    const paired: number[] = [];
    while (
      times.length < sampler.samples && (times.length < least || spent() < ctx.budgetSeconds)
    ) {
      times.push(await sampler.sample(calls++));
      if (ctx.paired) paired.push(await ctx.paired());
    }
    const figures = latencyFigures(times);
    return {
      rows: sampler.rows,
      p50: figures.p50Ms,
      p99: figures.p99Ms,
      samples: figures.samples,
      ...(paired.length > 0 ? { pairedP50: latencyFigures(paired).p50Ms } : {}),
      ...(sampler.note ? { note: sampler.note } : {}),
    };
  } catch (error) {
    return { rows: sampler?.rows ?? NaN, p50: NaN, p99: NaN, samples: 0, error: String(error) };
  } finally {
    await sampler?.finish?.().catch((error) =>
      console.error(`[scale] ${plan.name}: undoing its samples failed: ${error}`)
    );
  }
}

/** A list's path with its parents filled in, or null when a parent is not known. */
function concretePath(list: ListRoute, parents: Readonly<Record<string, string>>): string | null {
  let path = list.path;
  for (const param of list.pathParams) {
    const id = parents[param];
    if (id === undefined) return null;
    path = path.replace(`{${param}}`, id);
  }
  return path;
}

/** The same path with each parent named as the operation's name shows it. */
function namedPath(list: ListRoute, parentNames: Readonly<Record<string, string>>): string {
  return list.pathParams.reduce(
    (path, param) => path.replace(`{${param}}`, `{${parentNames[param] ?? param}}`),
    list.path,
  );
}

/** One request the bench sends again and again: fixed URL, expected 200. */
function repeatedGet(ctx: SizeContext, url: string, rows: number, note?: string): Sampler {
  return {
    rows,
    warmup: ctx.warmup,
    samples: ctx.samples,
    sample: async () => (await timedCall(url, { headers: ctx.headers })).ms,
    ...(note ? { note } : {}),
  };
}

interface ListPage {
  items: Record<string, unknown>[];
  totalCount?: number;
  nextCursor?: string | null;
  lastEventId?: string | null;
  hasMore?: boolean;
}

/**
 * Fills `ctx.totals` and `ctx.lastPages` for the lists at this size: an offset list's
 * totalCount; a cursor list or the feed walked to its end at WALK_LIMIT a page (its rows
 * counted, its last request kept).
 */
export async function surveyLists(ctx: SizeContext, lists: readonly ListRoute[]): Promise<void> {
  for (const list of lists) {
    const path = concretePath(list, ctx.parents);
    if (path === null) continue;
    try {
      await surveyList(ctx, list, path);
    } catch (error) {
      // The operations of this list fail for want of it, each saying so; the others go on.
      console.error(`[scale] surveying ${list.path} failed: ${error}`);
    }
  }
}

async function surveyList(ctx: SizeContext, list: ListRoute, path: string): Promise<void> {
  if (list.paging === "offset") {
    const { text } = await timedCall(`${ctx.gatewayUrl}${path}?limit=1`, {
      headers: ctx.headers,
    });
    ctx.totals.set(list.path, dataOf<ListPage>(text).totalCount ?? 0);
    return;
  }
  const param = list.paging === "cursor" ? "cursor" : "after";
  let rows = 0;
  let next: string | null = null;
  let last = "";
  for (;;) {
    const url: string = `${ctx.gatewayUrl}${path}?limit=${WALK_LIMIT}` +
      (next === null ? "" : `&${param}=${encodeURIComponent(next)}`);
    const page = dataOf<ListPage>((await timedCall(url, { headers: ctx.headers })).text);
    rows += page.items.length;
    last = url;
    next = list.paging === "cursor"
      ? page.nextCursor ?? null
      : page.hasMore
      ? page.lastEventId ?? null
      : null;
    if (next === null) break;
  }
  ctx.totals.set(list.path, rows);
  ctx.lastPages.set(list.path, last);
}

/** A named filter's value as chosen at ×1, and what the name shows. */
interface FilterChoice {
  value: string;
  shown: string;
  note?: string;
}

/** Fields a search term is taken from, in order of preference, when no list says otherwise. */
const SEARCH_FIELDS = ["companyName", "name", "title", "stockCode", "styleCode", "recipientName"];
/** The quotes list's two searches the issue names: by reference and by the client's name. */
const QUOTE_SEARCH_FIELDS = ["reference", "clientName"];

function chooseFilter(
  filter: { name: string; kind: "enum" | "boolean" | "string"; values: readonly string[] },
  items: readonly Record<string, unknown>[],
): FilterChoice {
  const seen = items.map((item) => item[filter.name]).find((v) =>
    v !== null && v !== undefined && v !== ""
  );
  if (filter.kind === "boolean") {
    const value = typeof seen === "boolean" ? String(seen) : "true";
    return { value, shown: value };
  }
  if (filter.kind === "enum") {
    const value = typeof seen === "string" && filter.values.includes(seen)
      ? seen
      : filter.values[0]!;
    return { value, shown: value };
  }
  if (typeof seen === "string" || typeof seen === "number") {
    return { value: String(seen), shown: `{${filter.name}}` };
  }
  // No row of the first page has one: a value no row has, so the filter's cost to find nothing
  // is what is measured.
  const value = filter.name.endsWith("Id") ? crypto.randomUUID() : "none-scale-bench";
  return {
    value,
    shown: `{${filter.name}: none}`,
    note: "no listed row has a value: matches none",
  };
}

/** What the read plans need beyond the lists: the parents' names and the shop's ids. */
export interface ReadPlanOptions {
  lists: readonly ListRoute[];
  /** How a nested list's parent is named in operation names (`long-ledger variant`). */
  parentNames: Readonly<Record<string, string>>;
  /** Offset lists with at least this many rows at ×1 get a far page (1,000 × factor). */
  farPageMinRows: number;
}

/**
 * The read plans, with filter values and search terms chosen from the data at this size (×1).
 * Lists whose parent is not known are answered in `skipped`.
 */
export async function readPlans(
  ctx: SizeContext,
  options: ReadPlanOptions,
): Promise<{ plans: OperationPlan[]; skipped: string[] }> {
  // A request that reads no seeded row: what it does at ×10 over ×1 is the machine's drift
  // between the sizes (the box is shared), against which the other ratios are read.
  const plans: OperationPlan[] = [{
    name: "GET /v1/me (control: reads no seeded row)",
    kind: "control",
    prepare: (c) => Promise.resolve(repeatedGet(c, `${c.gatewayUrl}/v1/me`, 0)),
  }];
  const skipped: string[] = [];
  const base = (list: ListRoute): string => namedPath(list, options.parentNames);
  for (const list of options.lists) {
    const path = concretePath(list, ctx.parents);
    if (path === null) {
      skipped.push(`${list.path}: no parent to list under`);
      continue;
    }
    const sample = dataOf<ListPage>(
      (await timedCall(`${ctx.gatewayUrl}${path}?limit=${WALK_LIMIT}`, { headers: ctx.headers }))
        .text,
    ).items;
    const offset = list.paging === "offset";
    const firstPage = (
      query: string,
      shown: string,
      kind: OperationKind,
      note?: string,
      counted = offset,
    ) => {
      plans.push({
        name: `GET ${base(list)}?limit=${PAGE}${shown}`,
        kind,
        counted,
        prepare: (c) => {
          const p = concretePath(list, c.parents)!;
          const url = `${c.gatewayUrl}${p}?limit=${PAGE}${query}`;
          // Its rows are the first answer's totalCount (a cursor list's, its walk's count).
          const sampler: Sampler = {
            rows: NaN,
            warmup: c.warmup,
            samples: c.samples,
            sample: async () => {
              const { ms, text } = await timedCall(url, { headers: c.headers });
              if (Number.isNaN(sampler.rows)) {
                sampler.rows = dataOf<ListPage>(text).totalCount ?? c.totals.get(list.path) ?? NaN;
              }
              return ms;
            },
            ...(note ? { note } : {}),
          };
          return Promise.resolve(sampler);
        },
      });
    };
    firstPage("", "", "first-page");
    // An offset list's first page without its count (`count=false`): what an integrator who
    // does not need the count pays, held to the first-page goal whatever the matches.
    if (offset) firstPage("&count=false", "&count=false", "first-page", undefined, false);
    for (const field of list.sortFields) {
      firstPage(`&sortField=${field}`, `&sortField=${field}`, "first-page");
      firstPage(
        `&sortField=${field}&sortDirection=desc`,
        `&sortField=${field}&sortDirection=desc`,
        "first-page",
      );
    }
    for (const filter of list.named) {
      const choice = chooseFilter(filter, sample);
      const query = `&${filter.name}=${encodeURIComponent(choice.value)}`;
      const shown = `&${filter.name}=${choice.shown}`;
      firstPage(query, shown, "first-page", choice.note);
      if (offset) {
        firstPage(`${query}&count=false`, `${shown}&count=false`, "first-page", choice.note, false);
      }
    }
    if (list.search) {
      const fields = list.path === "/v1/quotes" ? QUOTE_SEARCH_FIELDS : SEARCH_FIELDS;
      const wanted = list.path === "/v1/quotes" ? fields.length : 1;
      let found = 0;
      for (const field of fields) {
        if (found >= wanted) break;
        const term = sample.map((item) => item[field]).find((v) => typeof v === "string" && v);
        if (typeof term !== "string") continue;
        found++;
        const query = `&search=${encodeURIComponent(term)}`;
        firstPage(query, `&search={${field}}`, "search");
        // Without its count too: a term whose matches grow is counted whole, as any list is.
        if (offset) {
          firstPage(
            `${query}&count=false`,
            `&search={${field}}&count=false`,
            "search",
            undefined,
            false,
          );
        }
      }
      if (found === 0) skipped.push(`${list.path} search: no listed row has a text to search for`);
    }
    if (offset && (ctx.totals.get(list.path) ?? 0) >= options.farPageMinRows) {
      plans.push({
        name: `GET ${base(list)}?limit=${FAR_LIMIT}&offset={${FAR_PAGES} pages in}`,
        kind: "offset-far",
        prepare: (c) => {
          const total = c.totals.get(list.path) ?? 0;
          // 1,000 pages in, or the last full page of a list not that long (a small factor).
          const offset = Math.min(FAR_PAGES * FAR_LIMIT, Math.max(0, total - FAR_LIMIT));
          const p = concretePath(list, c.parents)!;
          return Promise.resolve(repeatedGet(
            c,
            `${c.gatewayUrl}${p}?limit=${FAR_LIMIT}&offset=${offset}`,
            total,
            `offset ${offset}`,
          ));
        },
      });
    }
    if (list.paging !== "offset") {
      const param = list.paging === "cursor" ? "cursor" : "after";
      plans.push({
        name: `GET ${base(list)}?limit=${WALK_LIMIT}&${param}={last page}`,
        kind: "cursor-last",
        prepare: (c) => {
          const url = c.lastPages.get(list.path);
          if (url === undefined) throw new Error(`${list.path} was not walked at this size`);
          return Promise.resolve(repeatedGet(c, url, c.totals.get(list.path) ?? NaN));
        },
      });
    }
  }

  for (const path of facetRoutes()) {
    plans.push({
      name: `GET ${path}`,
      kind: "facets",
      prepare: (c) =>
        Promise.resolve(
          repeatedGet(
            c,
            `${c.gatewayUrl}${path}`,
            c.totals.get(path.replace(/\/facets$/, "")) ?? NaN,
          ),
        ),
    });
  }

  for (const get of getByIdRoutes(options.lists)) {
    const list = options.lists.find((l) => l.path === get.listPath)!;
    if (concretePath(list, ctx.parents) === null) continue;
    plans.push({
      name: `GET ${get.path}`,
      kind: "get",
      prepare: async (c) => {
        // The newest rows at this size, as a client opening what it just listed reads them;
        // each is read once in the warm-up (a quote's first read stores its document).
        const p = concretePath(list, c.parents)!;
        const items = dataOf<ListPage>(
          (await timedCall(`${c.gatewayUrl}${p}?limit=${PAGE}`, { headers: c.headers })).text,
        ).items;
        const ids = items.map((item) => item.id).filter((id): id is string =>
          typeof id === "string"
        );
        if (ids.length === 0) throw new Error(`${get.listPath} lists nothing to read by id`);
        return {
          rows: c.totals.get(get.listPath) ?? NaN,
          warmup: c.warmup === 0 ? 0 : Math.max(c.warmup, ids.length),
          samples: c.samples,
          sample: async (i) =>
            (await timedCall(
              `${c.gatewayUrl}${get.path.replace(`{${get.param}}`, ids[i % ids.length]!)}`,
              { headers: c.headers },
            )).ms,
          note: `${ids.length} ids, the newest`,
        };
      },
    });
  }
  return { plans, skipped };
}

/** The lists of the contracts (re-exported so the bench reads them from one place). */
export { listRoutes };
