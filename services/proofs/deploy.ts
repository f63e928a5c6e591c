import { deployService } from "@printshop/shared/service-main";
import { proofsService } from "./app.ts";
import { proofsBackground } from "./background.ts";

// The Deno Deploy app (README "Deno Deploy"). The cron is registered at the top level, before any
// await: the platform finds crons by evaluating this module.
const app = deployService({ ...proofsService, background: proofsBackground });
Deno.cron("proofs background work", "* * * * *", () => app.tick());
