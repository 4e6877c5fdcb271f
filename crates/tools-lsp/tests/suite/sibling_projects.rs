//! Sibling TypeScript projects that do not reference each other: `pricing/`, `checkout/` and
//! `invoices/`, each with its own `tsconfig.json`, where `checkout/cart.ts` imports names
//! from `../pricing/rates` and `invoices/bill.ts` the module whole, by relative paths (no
//! project reference, no workspace package), and `reports/` a fourth project that imports
//! nothing of theirs but declares a function of the same name. With no workspace marker above
//! them each folder gets a server of its own; the importing projects are loaded into the
//! server asked by opening one of their files, so references (asked at the declaration or at
//! a use), a rename and a breaking write reach them, and never `reports/`.

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;

/// The references of `applyDiscount`, wherever they are asked.
const DISCOUNT_USES: &str = "\
checkout/cart.ts:1:10  import { applyDiscount, PriceBook } from \"../pricing/rates\";
checkout/cart.ts:5:10  return applyDiscount(gross, percent);
invoices/bill.ts:4:16  return rates.applyDiscount(amount, 10);
pricing/rates.ts:1:17  export function applyDiscount(amount: number, percent: number): number {";

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";

fn tools_present() -> bool {
    require_binary("typescript-language-server", "typescript-language-server").is_some()
}

/// `tsc -p` of one project: its output when it fails; `None` when tsc is not installed.
fn tsc_project(p: &Project, project: &str) -> Option<Result<(), String>> {
    let tsc = require_binary("typescript", "tsc")?;
    let out = std::process::Command::new(tsc)
        .args(["-p", project, "--pretty", "false"])
        .current_dir(p.root())
        .output()
        .unwrap();
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stdout).into_owned())
    })
}

#[tokio::test]
async fn references_in_a_sibling_project_that_imports_the_file_are_found() {
    if !tools_present() {
        return;
    }
    let p = Project::from_fixture("ts_siblings", CONFIG);
    let out = p
        .ok(
            json!({"action": "references", "file": "pricing/rates.ts", "line": 1,
                   "symbol": "applyDiscount"}),
        )
        .await;
    assert_eq!(
        out,
        format!("4 reference(s) of `applyDiscount` at pricing/rates.ts:1:\n{DISCOUNT_USES}")
    );
    let out = p
        .ok(
            json!({"action": "references", "file": "pricing/rates.ts", "line": 5,
                   "symbol": "PriceBook"}),
        )
        .await;
    assert_eq!(
        out,
        "4 reference(s) of `PriceBook` at pricing/rates.ts:5:\n\
         checkout/cart.ts:1:25  import { applyDiscount, PriceBook } from \"../pricing/rates\";\n\
         checkout/cart.ts:3:29  export function total(book: PriceBook, items: string[], percent: number): number {\n\
         checkout/cart.ts:8:30  export const houseBook = new PriceBook({ apple: 3, pear: 4 });\n\
         pricing/rates.ts:5:14  export class PriceBook {"
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn references_asked_at_a_use_reach_the_other_projects_importing_the_declaring_file() {
    if !tools_present() {
        return;
    }
    // The first call of the run, in the importing project: its server is rooted at
    // `checkout/`, and `invoices/` imports `pricing/rates.ts`, not the file asked about.
    let p = Project::from_fixture("ts_siblings", CONFIG);
    let out = p
        .ok(
            json!({"action": "references", "file": "checkout/cart.ts", "line": 5,
                   "symbol": "applyDiscount"}),
        )
        .await;
    assert_eq!(
        out,
        format!("4 reference(s) of `applyDiscount` at checkout/cart.ts:5:\n{DISCOUNT_USES}")
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn a_rename_edits_the_sibling_project_and_both_still_compile() {
    if !tools_present() {
        return;
    }
    let p = Project::from_fixture("ts_siblings", CONFIG);
    let rates = p.read("pricing/rates.ts");
    let cart = p.read("checkout/cart.ts");
    let bill = p.read("invoices/bill.ts");
    let summary = p.read("reports/summary.ts");
    let (out, check) = p
        .rename_checked(
            json!({"file": "pricing/rates.ts", "line": 1, "symbol": "applyDiscount",
                               "new_name": "discounted"}),
        )
        .await;
    assert_eq!(
        out.text
            .lines()
            .filter(|l| !l.starts_with("the check goes on: "))
            .take(4)
            .collect::<Vec<_>>(),
        [
            "renamed `applyDiscount` at pricing/rates.ts:1 to `discounted`: 4 edit(s) in 3 file(s)",
            "  checkout/cart.ts: 2 edit(s)",
            "  invoices/bill.ts: 1 edit(s)",
            "  pricing/rates.ts: 1 edit(s)",
        ],
        "{}",
        out.full_text()
    );
    assert!(
        !check.contains("new diagnostic(s)"),
        "a rename changes no meaning: {check}"
    );
    assert_eq!(
        p.read("pricing/rates.ts"),
        rates.replace("applyDiscount", "discounted")
    );
    assert_eq!(
        p.read("checkout/cart.ts"),
        cart.replace("applyDiscount", "discounted")
    );
    assert_eq!(
        p.read("invoices/bill.ts"),
        bill.replace("applyDiscount", "discounted")
    );
    // The project that only declares a function of the same name is not touched.
    assert_eq!(p.read("reports/summary.ts"), summary);
    for project in ["pricing", "checkout", "invoices", "reports"] {
        if let Some(built) = tsc_project(&p, project) {
            built.unwrap_or_else(|e| panic!("tsc -p {project}:\n{e}"));
        }
    }
    p.close_and_check().await;
}

#[tokio::test]
async fn a_breaking_write_names_the_calls_in_the_sibling_projects() {
    if !tools_present() {
        return;
    }
    let p = Project::from_fixture("ts_siblings", CONFIG);
    const MISSING: &str = "error [2554] Expected 3 arguments, but got 2.";
    let rates = p.read("pricing/rates.ts");
    let broken = rates.replace(
        "applyDiscount(amount: number, percent: number)",
        "applyDiscount(amount: number, percent: number, floor: number)",
    );
    assert_eq!(
        super::section(p.write_tool("pricing/rates.ts", &broken).await),
        format!(
            "2 new diagnostic(s) after this write:\n\
             checkout/cart.ts:5:10 {MISSING}\n\
             invoices/bill.ts:4:16 {MISSING}"
        )
    );
    assert_eq!(
        super::section(p.write_tool("pricing/rates.ts", &rates).await),
        format!(
            "no new diagnostics after this write.\n\
             2 earlier diagnostic(s) are gone after this write:\n  \
             checkout/cart.ts:5 {MISSING}\n  \
             invoices/bill.ts:4 {MISSING}"
        )
    );
    p.close_and_check().await;
}
