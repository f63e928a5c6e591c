import { runService } from "@printshop/shared/service-main";
import { proofsService } from "./app.ts";
import { proofsBackground } from "./background.ts";

await runService({ ...proofsService, background: proofsBackground });
