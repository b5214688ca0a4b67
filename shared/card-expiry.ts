// Whether a card's MMYY expiry has passed: the checkout's checks, the sandbox processor and the expiry warnings read it alike.
/** A card expires after the last day of its MMYY month (UTC). */
export function isCardExpired(expiry: string, now: Date): boolean {
	const month = Number(expiry.slice(0, 2));
	const year = 2000 + Number(expiry.slice(2, 4));
	return now.getTime() >= Date.UTC(year, month, 1);
}
