/**
 * The six Deno Deploy apps as the simulation starts them: each app's directory and its `deploy`
 * settings (from the folder's deno.json, as the platform reads them), and the variables the README's
 * "Deno Deploy" table lists for it, so neither can drift from what the simulation runs.
 */
import { EVENT_TOPICS, topicOf } from "@printshop/shared/events";
import { CUSTOMER_TOPIC } from "../../services/quotes/consumer.ts";

export const APPS = ["gateway", "quotes", "catalogue", "crm", "proofs", "webhooks"] as const;
export type AppName = typeof APPS[number];

const ROOT = new URL("../../", import.meta.url);

export interface DeploySettings {
  dir: string;
  install: string;
  predeploy: string;
  entrypoint: string;
}

/** The app's folder and what its deno.json's `deploy` key says. */
export async function deploySettings(app: AppName): Promise<DeploySettings> {
  const dir = new URL(app === "gateway" ? "gateway/" : `services/${app}/`, ROOT).pathname;
  const config = JSON.parse(await Deno.readTextFile(`${dir}deno.json`)) as {
    deploy?: { install?: string; predeploy?: string; runtime?: { entrypoint?: string } };
  };
  const deploy = config.deploy;
  if (!deploy?.install || !deploy.predeploy || !deploy.runtime?.entrypoint) {
    throw new Error(`${dir}deno.json has no complete "deploy" settings`);
  }
  return {
    dir,
    install: deploy.install,
    predeploy: deploy.predeploy,
    entrypoint: deploy.runtime.entrypoint,
  };
}

/**
 * The variables of each app, from the README's "Deno Deploy" section: the table whose first column
 * is "Variable", with one column per app and a ✓ where the app takes it.
 */
export function variablesFromReadme(readme: string): Record<AppName, string[]> {
  const start = readme.indexOf("\n## Deno Deploy\n");
  if (start === -1) throw new Error('README has no "## Deno Deploy" section');
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  const rows = section.split("\n").filter((line) => line.trim().startsWith("|"))
    .map((line) => line.trim().replace(/^\||\|$/g, "").split("|").map((cell) => cell.trim()));
  const header = rows.find((cells) => cells[0] === "Variable");
  if (!header) throw new Error('the "Deno Deploy" section has no table of variables');
  const columns = new Map(header.map((name, index) => [name, index]));
  const result = {} as Record<AppName, string[]>;
  for (const app of APPS) {
    const column = columns.get(app);
    if (column === undefined) throw new Error(`the variables table has no column "${app}"`);
    result[app] = rows
      .filter((cells) => /^`[A-Z0-9_]+`$/.test(cells[0] ?? "") && cells[column] === "✓")
      .map((cells) => cells[0]!.slice(1, -1));
  }
  return result;
}

/** The apps that consume `app`'s topic: whom its relay kicks (KICK_URLS). */
export function consumersOf(app: AppName): AppName[] {
  const topic = topicOf(app);
  const consumers: AppName[] = [];
  if (EVENT_TOPICS.includes(topic)) consumers.push("webhooks");
  if (topic === CUSTOMER_TOPIC) consumers.push("quotes");
  return consumers;
}
