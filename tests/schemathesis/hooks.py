"""schemathesis hooks for scripts/schemathesis.mjs.

Formats that a pattern cannot express (an EIP-55 checksum, a VerifiableURI, canonical ABI calldata, a CID) are
drawn from sample values the script wrote (PR_SCHEMATHESIS_SAMPLES), made with viem or answered by the Worker.
The API keys the run uses (PR_PROTECTED_KEY_IDS) are never revoked nor changed: a DELETE or PATCH aimed at one (the
stateful phase takes ids from GET /admin/api-keys) goes to a stand-in key created for it instead, so that the answer
is the same. A signer the run drains is activated again right after the answer is checked, so the relayer keeps a
signer for the rest of the run (every signer drained answers 503 NO_ACTIVE_SIGNER, as documented).
"""

import json
import os

import requests
import schemathesis
from hypothesis import strategies as st

with open(os.environ["PR_SCHEMATHESIS_SAMPLES"], encoding="utf-8") as f:
    SAMPLES = json.load(f)

# half of the addresses exist on the stack (a profile, its KeyManager, LSP7 and LSP8 contracts)
ADDRESSES = SAMPLES["addresses"]
schemathesis.openapi.format(
    "eth-address", st.one_of(st.sampled_from(ADDRESSES["known"]), st.sampled_from(ADDRESSES["other"]))
)
for name, values in [
    ("lsp2-verifiable-uri", SAMPLES["verifiableUris"]),
    ("lsp23-post-deployment-calldata", SAMPLES["calldatas"]),
    ("ipfs-path", SAMPLES["cids"]),
]:
    schemathesis.openapi.format(name, st.sampled_from(values))

PROTECTED = {key_id for key_id in os.environ["PR_PROTECTED_KEY_IDS"].split(",") if key_id}


def stand_in_key() -> str:
    response = requests.post(
        f"{os.environ['PR_WORKER_URL']}/admin/api-keys",
        json={"name": "stand-in for a key the run uses"},
        headers={"authorization": f"Bearer {os.environ['PR_ADMIN_TOKEN']}"},
        timeout=30,
    )
    response.raise_for_status()
    return response.json()["id"]


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.method.upper() in ("DELETE", "PATCH") and (case.path_parameters or {}).get("id") in PROTECTED:
        case.path_parameters["id"] = stand_in_key()


@schemathesis.hook
def after_call(context, case, response):
    if case.method.upper() == "POST" and case.path.endswith("/drain") and response.status_code == 200:
        address = (case.path_parameters or {})["address"]
        requests.post(
            f"{os.environ['PR_WORKER_URL']}/admin/relayer/signers/{address}/activate",
            headers={"authorization": f"Bearer {os.environ['PR_ADMIN_TOKEN']}"},
            timeout=30,
        ).raise_for_status()
