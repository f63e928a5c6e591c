import type { Sql } from "@printshop/shared/db";
import type { ErrorDetail } from "@printshop/shared/http";
import type { ServiceName } from "@printshop/shared/routes";

export type ComponentState = "up" | "down";

export interface HealthReport {
  healthy: boolean;
  database: ComponentState;
  services: Record<string, ComponentState>;
  problems: ErrorDetail[];
}

const HEALTH_TIMEOUT_MS = 2_000;

/** Asks the database and every service's /healthz at once, each with a short timeout. */
export async function checkServices(
  sql: Sql,
  urls: Record<ServiceName, string>,
  fetcher: typeof fetch,
): Promise<HealthReport> {
  const problems: ErrorDetail[] = [];
  const probe = async (name: ServiceName, url: string): Promise<[string, ComponentState]> => {
    try {
      const res = await fetcher(`${url}/healthz`, {
        signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS),
      });
      await res.body?.cancel();
      if (res.ok) return [name, "up"];
      problems.push({ path: `services.${name}`, message: `Answered HTTP ${res.status}` });
    } catch {
      problems.push({ path: `services.${name}`, message: "Did not answer" });
    }
    return [name, "down"];
  };
  const [database, ...services] = await Promise.all([
    sql`SELECT 1`.then((): ComponentState => "up", (): ComponentState => {
      problems.push({ path: "database", message: "Did not answer" });
      return "down";
    }),
    ...Object.entries(urls).map(([name, url]) => probe(name as ServiceName, url)),
  ]);
  return {
    healthy: problems.length === 0,
    database: database as ComponentState,
    services: Object.fromEntries(services as [string, ComponentState][]),
    problems,
  };
}
