import type { HttpMethod, Operation } from "./contracts/operation.ts";
import { gatewayContract, SERVICE_CONTRACTS } from "./contracts/platform.ts";

export type { HttpMethod };

export type ServiceName = typeof SERVICE_CONTRACTS[number]["service"];
export type Owner = ServiceName | "gateway";

/** The services behind the gateway, in the order the contracts list them. */
export const SERVICES: readonly ServiceName[] = SERVICE_CONTRACTS.map((c) => c.service);

/** A declared operation and who answers it. */
export type RouteDef = Operation & { readonly service: Owner };

/**
 * Every public operation, read from the contracts: the gateway's own first, then each service's.
 * The gateway routes and checks scopes from this table, and the OpenAPI document is generated
 * from it; nothing here is written by hand.
 */
export const ROUTES: readonly RouteDef[] = [gatewayContract, ...SERVICE_CONTRACTS].flatMap(
  (contract) =>
    Object.values(contract.operations).map((operation: Operation) => ({
      ...operation,
      service: contract.service,
    })),
);

export function routesOf(owner: Owner): RouteDef[] {
  return ROUTES.filter((r) => r.service === owner);
}

/** `/v1/quotes/{quoteId}` → `/v1/quotes/:quoteId` for Hono. */
export function toHonoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1");
}

const METHOD_ORDER: readonly HttpMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

export interface RouteMatch {
  route: RouteDef;
  params: Record<string, string>;
}

interface CompiledRoute {
  route: RouteDef;
  segments: string[];
}

/**
 * Matches a concrete path against the table. Literal segments beat parameters, so
 * `/v1/quotes/facets` is never read as a quote id.
 */
export class RouteTable {
  #compiled: CompiledRoute[];

  constructor(routes: readonly RouteDef[] = ROUTES) {
    this.#compiled = routes.map((route) => ({ route, segments: route.path.split("/") }));
  }

  /**
   * The methods some operation takes at this concrete path (for a 405's `Allow`), in order. Where
   * a literal path and a parameter path both fit (`/v1/quotes/facets`), only the literal's count.
   */
  methodsAt(path: string): HttpMethod[] {
    const fits = METHOD_ORDER.flatMap((method) => {
      const best = this.#best(method, path);
      return best ? [{ method, literals: best.literals }] : [];
    });
    const most = Math.max(...fits.map((f) => f.literals));
    return fits.filter((f) => f.literals === most).map((f) => f.method);
  }

  match(method: string, path: string): RouteMatch | null {
    return this.#best(method, path)?.match ?? null;
  }

  #best(method: string, path: string): { match: RouteMatch; literals: number } | null {
    const parts = path.split("/");
    let best: { match: RouteMatch; literals: number } | null = null;
    for (const { route, segments } of this.#compiled) {
      if (route.method !== method || segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let literals = 0;
      let ok = true;
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i]!;
        const part = parts[i]!;
        if (seg.startsWith("{")) {
          if (part === "") {
            ok = false;
            break;
          }
          const decoded = safeDecode(part);
          if (decoded === null) {
            ok = false;
            break;
          }
          params[seg.slice(1, -1)] = decoded;
        } else if (seg === part) {
          literals++;
        } else {
          ok = false;
          break;
        }
      }
      if (ok && (!best || literals > best.literals)) best = { match: { route, params }, literals };
    }
    return best;
  }
}

function safeDecode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}
