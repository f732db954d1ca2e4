"""The dummy providers' data: every transaction is a pure function of (world seed, account id, index n).

A provider account has a schedule: transaction n happened at `origin + n * step + jitter(n)` with the jitter
below one step, so times strictly increase with n, "how many by time T" is arithmetic, and a page of a
million-transaction account costs what a page of a small one costs. The store keeps only which n were delivered
(transactions table); bodies are drawn here on read: Faker (seeded by world seed and account id) fills a small
pool of shoppers and products per account, a fast seeded generator picks from it per transaction.
"""

import hashlib
import json
import random
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..rows import AccountRow
from ..timestamps import DAY_US, render

MASK = (1 << 64) - 1

# PaymentClassification (spec §2: Donation, Tax and Adjustment among them) with how often a provider sends each.
CLASSIFICATIONS = (("Payment", 70), ("Refund", 8), ("Fee", 10), ("Payout", 3), ("Chargeback", 1),
                   ("Donation", 2), ("Tax", 4), ("Adjustment", 2))
TRANSACTION_TYPES = {
    "Payment": [("CAPTURE", "Capture of an authorized payment"), ("SALE", "Direct sale")],
    "Refund": [("REFUND", "Refund to the shopper")],
    "Fee": [("PROCESSING_FEE", "Processing fee"), ("MONTHLY_FEE", "Monthly account fee")],
    "Payout": [("PAYOUT", "Payout to the merchant's bank account")],
    "Chargeback": [("CHARGEBACK", "Chargeback raised by the card issuer")],
    "Donation": [("DONATION", "Donation collected at checkout")],
    "Tax": [("SALES_TAX", "Sales tax"), ("VAT", "Value added tax")],
    "Adjustment": [("ROUNDING", "Rounding difference"), ("CORRECTION", "Manual correction")],
}
SIGN = {"Payment": 1, "Donation": 1, "Refund": -1, "Fee": -1, "Payout": -1, "Chargeback": -1, "Tax": -1,
        "Adjustment": 1}
METHODS = ("card", "paypal", "sepa_debit", "apple_pay", "klarna")
_weights = [w for _, w in CLASSIFICATIONS]
_names = [c for c, _ in CLASSIFICATIONS]


def mix(*parts):
    """A 64-bit integer drawn from its parts (SHA-256): stable across runs, platforms and Python versions."""
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "big")


def splitmix(x):
    """A cheap 64-bit mixer for per-transaction jitter (a million of these take well under a second)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


@dataclass(frozen=True)
class Schedule:
    """When the transactions of one provider account happened: strictly increasing times, O(1) to invert."""
    seed: int
    origin: int     # microseconds: transaction 0 happened in [origin, origin + step)
    step: int       # microseconds between consecutive transactions (>= 1)

    def at(self, n):
        return self.origin + n * self.step + splitmix(self.seed ^ n) % self.step

    def count_before(self, t):
        """How many transactions happened strictly before `t` (the provider delivers those at time t)."""
        if t <= self.origin:
            return 0
        n = (t - self.origin) // self.step      # transactions 0..n-1 surely before t; n maybe
        return n + 1 if self.at(n) < t else n

    def first_at_or_after(self, t):
        return self.count_before(t)

    def times(self, lo, hi):
        origin, step, seed = self.origin, self.step, self.seed
        for n in range(lo, hi):
            x = ((seed ^ n) + 0x9E3779B97F4A7C15) & MASK
            x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
            yield n, origin + n * step + (x ^ (x >> 31)) % step


def account_seed(world_seed, account_id):
    return mix("account", world_seed, account_id)


def schedule(world_seed, account_id, created_at, options):
    """The account's schedule from its provider options: `perDay` transactions a day, `historyDays` of history
    before the account was created (or `historyTransactions` exactly, spread over that history)."""
    history = options["historyDays"] * DAY_US
    total = options.get("historyTransactions")
    step = max(1, history // total) if total else max(1, DAY_US // options["perDay"])
    origin = created_at - (step * total if total else history)
    return Schedule(account_seed(world_seed, account_id), origin, step)


def schedule_of(world_seed: int, account: AccountRow) -> "Schedule":
    """The schedule of an account row (accounts table): its provider options, from its creation."""
    return schedule(world_seed, account["id"], account["created_at"], json.loads(account["options"]))


def statistics(world_seed: int, account: AccountRow) -> dict[str, Any]:
    """The account's statistics object (spec §2): the delivered transactions' count, first and last times."""
    count = account["delivered"]
    when = schedule_of(world_seed, account)
    return {"count": count, "first": render(when.at(0)) if count else None,
            "last": render(when.at(count - 1)) if count else None}


def transaction_id(account_id, n):
    """Ids sort like the transactions (n in front) and carry a digest of the account, so an id is only valid
    for its account: `{n:08x}-xxxx-xxxx-xxxx-xxxxxxxxxxxx`."""
    h = hashlib.sha256(f"transaction/{account_id}/{n}".encode()).hexdigest()
    return f"{n:08x}-{h[:4]}-{h[4:8]}-{h[8:12]}-{h[12:24]}"


def index_of(account_id, ident):
    """n of a transaction id of this account, or None (malformed, or another account's)."""
    try:
        n = int(ident[:8], 16) if isinstance(ident, str) and len(ident) == 36 else None
    except ValueError:
        return None
    return n if n is not None and transaction_id(account_id, n) == ident else None


# One Faker for every draw, re-seeded each time (its four locales are the costly part to build); a lock, since a draw
# is a seed followed by many calls.
_faker_lock = threading.Lock()


@lru_cache(maxsize=1)
def _faker():
    # Late: Faker's import is costly at start-up, and nothing before the first transaction read needs it.
    from faker import Faker
    return Faker(["en_US", "de_DE", "fr_FR", "en_GB"])


class Pool:
    """Per-account material drawn once with Faker seeded by (world seed, account id)."""

    def __init__(self, seed):
        with _faker_lock:
            self._draw(_faker(), seed)

    def _draw(self, fake, seed):
        fake.seed_instance(seed)        # a new Random per locale: what was drawn before leaves no trace
        self.shoppers = []
        for _ in range(48):
            profile = fake.simple_profile()
            self.shoppers.append({"name": profile["name"], "email": profile["mail"],
                                  "country": fake.current_country_code()})
        self.products = [fake.catch_phrase() for _ in range(32)]
        self.company = fake.company()
        self.skus = [fake.bothify("SKU-????-####").upper() for _ in range(16)]


@lru_cache(maxsize=256)
def pool(seed):
    """The account's Pool (cached: drawing it takes a few milliseconds, a page reads it a hundred times)."""
    return Pool(seed)


def transaction(account, type_entry, schedule_, n, report_id=None):
    """The full transaction record n of an account (spec §2), identical for the same seed and account id."""
    rnd = random.Random(splitmix(schedule_.seed ^ (n * 0x2545F4914F6CDD1D & MASK)))
    material = pool(schedule_.seed)
    currency = type_entry["provider"].get("currency", "EUR")
    classification = rnd.choices(_names, _weights)[0]
    code, type_name = rnd.choice(TRANSACTION_TYPES[classification])
    cents = rnd.randint(50, 5000) if classification in ("Fee", "Tax", "Adjustment", "Donation") else \
        rnd.randint(500, 250_000)
    amount = SIGN[classification] * cents / 100
    shopper = dict(rnd.choice(material.shoppers)) if classification in ("Payment", "Refund", "Chargeback",
                                                                        "Donation") else None
    order = f"ORD-{(schedule_.seed >> 40) & 0xFFFF:04X}-{n + 1:07d}"
    booking = f"{type_name}: {rnd.choice(material.products)}" if shopper else f"{type_name} ({material.company})"
    created = schedule_.at(n)
    values = {"orderNumber": order, "bookingText": booking, "amount": amount, "currency": currency,
              "paymentMethod": rnd.choice(METHODS), "providerReference": f"PR{rnd.getrandbits(40):012X}",
              "status": "settled", "cardBrand": rnd.choice(("VISA", "MASTERCARD", "AMEX")),
              "maskedPan": f"{rnd.randint(400000, 559999)}******{rnd.randint(0, 9999):04d}",
              "terminalId": f"T{rnd.randint(1, 12):03d}", "batchNumber": f"B{created // DAY_US % 100000:05d}",
              "sku": rnd.choice(material.skus), "fulfillment": rnd.choice(("merchant", "marketplace")),
              "marketplaceFee": round(-abs(amount) * 0.15, 2)}
    fields = [{"name": f["name"], "value": values.get(f["name"]), "isDeprecated": f["isDeprecated"],
               "deprecationReason": f["deprecationReason"], "isMapped": f["mappedTo"] is not None,
               "mappedTo": f["mappedTo"]} for f in type_entry["transactionFields"]]
    return {
        "id": transaction_id(account["id"], n),
        "accountId": account["id"],
        "createdAt": render(created),
        "orderNumber": order,
        "bookingText": booking,
        "amount": amount,
        "currency": currency,
        "classification": classification,
        "transactionType": {"code": code, "name": type_name},
        "shopper": shopper,
        "reportId": report_id,
        "fields": fields,
    }


def rejects(credentials):
    """The dummy providers' one way to refuse credentials: a secret whose value is `wrong`."""
    if "wrong" in credentials.values():
        return {"field": None, "code": "InvalidCredentials",
                "message": "The provider rejected the credentials (a secret was `wrong`)."}
    return None
