"""Reads `loadtest matrix --json` on stdin and checks the ground truth the resource store
reported: `none` oversells, every other tier sells exactly its stock (ledger orders equal
the stock, final stock 0, nothing oversold, no lost update, no overlap), and every 200
of the burst is a ledger entry. Prints one line; exits 1 on the first tier that breaks it."""
import json
import sys

report = json.load(sys.stdin)
stock = report.get("stock", 100)
rows = report["rows"]
said = []
for row in rows:
    tier = row["tier"]
    if row["ok"] != row["ledger_orders"]:
        print(f"{tier}: {row['ok']} buyers told sold, {row['ledger_orders']} ledger entries")
        sys.exit(1)
    if tier == "none":
        if row["oversold"] <= 0:
            print(f"none: oversold {row['oversold']}, a race must oversell")
            sys.exit(1)
        said.append(f"none oversold {row['oversold']}")
        continue
    exact = (row["ledger_orders"], row["final_stock"], row["oversold"], row["lost_updates"], row["overlaps"])
    if exact != (stock, 0, 0, 0, 0):
        print(f"{tier}: orders, final stock, oversold, lost updates, overlaps = {exact}, want ({stock}, 0, 0, 0, 0)")
        sys.exit(1)
    said.append(f"{tier} {row['ledger_orders']}/{stock}")
print(", ".join(said))
