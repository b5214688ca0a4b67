// Card update links: what a merchant's support sends a customer (from the
// dashboard) to give a new card. A card update session lives 5 minutes and is
// bound to the page that shows the frame, so the link carries a token instead,
// valid CARD_UPDATE_LINK_DAYS; opening it on the service's own page
// (/update-card/) makes a fresh card update session for that page's host.
import { randomBytes } from "node:crypto";
import { sha256Hex } from "../../shared/crypto";
import { formatDateTime } from "../../shared/time";
import { cardUpdateRefusal, createSession } from "./checkout-sessions";
import type { SessionsDeps } from "./deps";
import { SessionsError } from "./errors";

/** How long a link can be opened. */
export const CARD_UPDATE_LINK_DAYS = 7;

export interface CardUpdateLink {
	/** The page and token to send: `<baseUrl>/update-card/#<token>`. */
	link: string;
	expiresAt: string;
	message: string;
}

export async function createCardUpdateLink(
	deps: SessionsDeps,
	input: { accountId: number; customerId: number; baseUrl: string },
): Promise<CardUpdateLink | SessionsError.UnknownCustomer | SessionsError.NotUpdatable> {
	const refused = await cardUpdateRefusal(deps, input.accountId, input.customerId);
	if (refused) return refused;
	const token = randomBytes(32).toString("base64url");
	const createdAt = deps.now();
	const expiresAt = new Date(createdAt.getTime() + CARD_UPDATE_LINK_DAYS * 86_400_000);
	await deps.db.cardUpdateLinks.create({
		_id: sha256Hex(token),
		accountId: input.accountId,
		customerId: input.customerId,
		createdAt,
		expiresAt,
	});
	// The token goes in the fragment: browsers do not send it to any server, so no access log keeps it.
	return {
		link: `${input.baseUrl}/update-card/#${token}`,
		expiresAt: formatDateTime(expiresAt),
		message: `Card update link valid until ${formatDateTime(expiresAt)}`,
	};
}

/** A card update session for the link's customer, on the host the link was opened on. */
export async function openCardUpdateLink(
	deps: SessionsDeps,
	input: { token: string; domain: string },
): Promise<{ sessionId: string } | SessionsError> {
	const link = await deps.db.cardUpdateLinks.findById(sha256Hex(input.token)).lean();
	if (!link || link.expiresAt.getTime() <= deps.now().getTime()) return SessionsError.UnknownLink;
	const session = await createSession(deps, { accountId: link.accountId, customerId: link.customerId, domain: input.domain });
	return session === SessionsError.InvalidDomain ? SessionsError.LinkOnInvalidHost : session;
}
