/**
 * Walking a list to its end. How each list pages is read from the document (`x-pagination`,
 * generated into `pagination`), never guessed from its path: offset lists advance `offset` by the
 * rows received while `hasMore` is true (asked with `count=false` unless the query says: a walk
 * has no use for the count, which costs the server more as the list grows); cursor lists send
 * back `nextCursor` until it is null; the event log sends back `lastEventId` as `after` while
 * `hasMore` is true.
 */
import type { Client } from "openapi-fetch";
import { PrintShopApiError } from "./errors.ts";
import { type PaginatedPath, pagination, type paths } from "./schema.ts";

type ListOperation<P extends PaginatedPath> = paths[P]["get"];

/** The query of a list, as its operation declares it. */
export type ListQuery<P extends PaginatedPath> = NonNullable<
  ListOperation<P>["parameters"]["query"]
>;

type ListPathParams<P extends PaginatedPath> = ListOperation<P>["parameters"]["path"];

/** One row of a list. */
export type ListItem<P extends PaginatedPath> = ListOperation<
  P
>["responses"][200]["content"]["application/json"]["data"]["items"][number];

/**
 * Where and how to start: the list's filters, sort and page size (`limit`) in `query`, and its
 * path ids in `path` when it has some. A `offset`, `cursor` or `after` given starts from there.
 */
export type PaginateInit<P extends PaginatedPath> =
  & {
    query?: ListQuery<P>;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  }
  & (ListPathParams<P> extends Record<string, unknown> ? { path: ListPathParams<P> }
    : { path?: undefined });

/** The arguments after the path: required only when the list's path has ids. */
export type PaginateArgs<P extends PaginatedPath> = ListPathParams<P> extends
  Record<string, unknown> ? [init: PaginateInit<P>]
  : [init?: PaginateInit<P>];

/** `client.paginate`: every row of a list, page after page, as one async iterator. */
export type Paginate = <P extends PaginatedPath>(
  path: P,
  ...args: PaginateArgs<P>
) => AsyncGenerator<ListItem<P>, void, undefined>;

/** openapi-fetch's GET with the path's types set aside, since the path is only known as `P`. */
type LooseGet = (path: string, init: {
  params: { path?: Record<string, unknown>; query?: Record<string, unknown> };
  headers?: Record<string, string>;
  signal?: AbortSignal;
}) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** Reads `data.items`-style paths (as `x-pagination` names them) out of an answer. */
function at(body: unknown, path: string): unknown {
  let value = body;
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Builds `paginate` over an openapi-fetch client of the platform. */
export function createPaginate(client: Client<paths>): Paginate {
  const get = client.GET as unknown as LooseGet;

  async function* walk(
    path: PaginatedPath,
    init: PaginateInit<PaginatedPath> | undefined,
  ): AsyncGenerator<unknown, void, undefined> {
    const spec = pagination[path];
    const query: Record<string, unknown> = { ...init?.query };
    const fetchPage = async (): Promise<unknown> => {
      const { data, error, response } = await get(path, {
        params: { ...(init?.path ? { path: init.path } : {}), query },
        ...(init?.headers ? { headers: init.headers } : {}),
        ...(init?.signal ? { signal: init.signal } : {}),
      });
      if (!response.ok) throw new PrintShopApiError(response, error);
      return data;
    };

    if (spec.style === "offset") {
      let offset = Number(query[spec.offsetParameter] ?? 0);
      query.count ??= "false";
      for (;;) {
        // The document declares query integers as strings (`^\d{1,9}$`).
        query[spec.offsetParameter] = String(offset);
        const body = await fetchPage();
        const items = at(body, spec.items);
        if (!Array.isArray(items)) throw new Error(`${path}: no ${spec.items} in the answer`);
        yield* items;
        offset += items.length;
        // An empty page also ends it: `limit=0` answers no rows whatever follows.
        if (items.length === 0 || at(body, spec.hasMore) !== true) return;
      }
    }

    for (;;) {
      const body = await fetchPage();
      const items = at(body, spec.items);
      if (!Array.isArray(items)) throw new Error(`${path}: no ${spec.items} in the answer`);
      yield* items;
      const next = at(body, spec.next);
      const more = "hasMore" in spec ? at(body, spec.hasMore) === true : next !== null;
      if (!more || typeof next !== "string" || items.length === 0) return;
      query[spec.cursorParameter] = next;
    }
  }

  return (<P extends PaginatedPath>(path: P, ...args: PaginateArgs<P>) =>
    walk(path, args[0] as PaginateInit<PaginatedPath> | undefined)) as Paginate;
}
