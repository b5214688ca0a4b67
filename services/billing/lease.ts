// Leases: a billing node (or a request) holds a customer's renewal or a
// refund for a while by writing {owner, until} on it with a conditional
// update; once `until` has passed, anyone may take it over.

export interface Lease {
	owner: string;
	until: Date;
}

export function newLease(owner: string, now: Date, ms: number): Lease {
	return { owner, until: new Date(now.getTime() + ms) };
}

/** The filter for "nobody holds the lease in `field`": none was taken, or it has expired. */
export function leaseFree(field: string, now: Date): { $or: object[] } {
	return { $or: [{ [field]: null }, { [`${field}.until`]: { $lte: now } }] };
}
