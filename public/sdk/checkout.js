// PaymentCheckout: the script merchants put on their page.
//
//   <script src="https://<service>/sdk/checkout.js"></script>
//   PaymentCheckout.mount(element, { sessionId, productId, domain, additionalData, promotionCode, onResult })
//   PaymentCheckout.mount(element, { sessionId, mode: "update", domain, onResult })   a card update session
//
// It shows the service's card form in an iframe. The card is typed into, and
// encrypted inside, that frame, which runs on the service's origin, so the
// merchant's page never holds card data; the page only learns the outcome
// (onResult: the final code, AUTHENTICATION_FAILED included; a 3-D Secure
// challenge happens inside the frame, docs/authentication.md).
// promotionCode: true shows a promotion code field in the frame (docs/coupons.md);
// onResult then gets the discount of an OK checkout that used one.
// A classic script (not a module) so a plain <script src> tag is enough.
(() => {
	"use strict";

	// The service is wherever this script was loaded from. document.currentScript
	// is only set while the script first runs, so read it now.
	const script = document.currentScript;
	const SERVICE_ORIGIN = script?.src ? new URL(script.src, location.href).origin : null;

	const INITIAL_HEIGHT = 480; // until the frame reports its own
	const MAX_HEIGHT = 4000; // a frame cannot take over the page

	function mount(element, options = {}) {
		if (!SERVICE_ORIGIN) throw new Error('PaymentCheckout: load checkout.js with a <script src="…"> tag');
		const container = typeof element === "string" ? document.querySelector(element) : element;
		if (!(container instanceof Element)) throw new TypeError("PaymentCheckout.mount: element not found");
		const { sessionId, update, productId, domain, additionalData, promotionCode, onResult } = checkedOptions(options);

		// Only identifiers go in the URL, which ends up in logs and history.
		// additionalData is the merchant's own and may be personal, so it goes
		// by postMessage to the service's origin once the frame has loaded.
		const src = new URL("/checkout/frame.html", SERVICE_ORIGIN);
		src.search = new URLSearchParams(
			update
				? { sessionId, mode: "update", domain }
				: { sessionId, productId: String(productId), domain, ...(promotionCode ? { promotionCode: "1" } : {}) },
		).toString();
		const iframe = createFrame(src, update);

		// Runs on every load of the frame; postMessage with our service origin as
		// target drops the message if the frame is showing anything else.
		iframe.addEventListener("load", () => {
			iframe.contentWindow?.postMessage({ type: "init", additionalData }, SERVICE_ORIGIN);
		});

		function onMessage(event) {
			// Only our own frame: right origin, and this very iframe (not another
			// frame of the service, nor a script posting to this window).
			if (event.origin !== SERVICE_ORIGIN || event.source !== iframe.contentWindow) return;
			if (event.data && typeof event.data === "object") onFrameMessage(iframe, event.data, onResult);
		}

		window.addEventListener("message", onMessage);
		container.appendChild(iframe);

		return {
			unmount() {
				window.removeEventListener("message", onMessage);
				iframe.remove();
			},
		};
	}

	/** mount's options, checked in this order; throws a TypeError naming the first wrong one. */
	function checkedOptions(options) {
		const { sessionId, additionalData, onResult } = options;
		const update = isUpdateMode(options.mode);
		const productId = update ? null : Number(options.productId);
		// The session is bound to a bare host name and the service compares it
		// with this value: "shop.example.com", never a URL.
		const domain = options.domain ?? location.hostname;
		checkIdentifiers(sessionId, productId, domain);
		if (additionalData !== undefined && !isPlainObject(additionalData)) {
			throw new TypeError("PaymentCheckout.mount: additionalData must be an object");
		}
		if (options.promotionCode !== undefined && typeof options.promotionCode !== "boolean") {
			throw new TypeError("PaymentCheckout.mount: promotionCode must be true or false");
		}
		return { sessionId, update, productId, domain, additionalData, promotionCode: options.promotionCode === true && !update, onResult };
	}

	/** A card update session's frame takes only a card; it has no product. */
	function isUpdateMode(mode) {
		if (mode !== undefined && mode !== "update") throw new TypeError('PaymentCheckout.mount: mode must be "update" or left out');
		return mode === "update";
	}

	/** The identifiers that go in the frame's URL; productId is null for a card update. */
	function checkIdentifiers(sessionId, productId, domain) {
		if (typeof sessionId !== "string" || sessionId === "") throw new TypeError("PaymentCheckout.mount: sessionId is required");
		if (productId !== null && !isPositiveInteger(productId))
			throw new TypeError("PaymentCheckout.mount: productId must be a positive integer");
		if (typeof domain !== "string" || !/^[a-z0-9.-]+$/i.test(domain)) {
			throw new TypeError("PaymentCheckout.mount: domain must be a host name like shop.example.com (no scheme, port or path)");
		}
	}

	const isPositiveInteger = value => Number.isInteger(value) && value > 0;
	const isPlainObject = value => value !== null && typeof value === "object" && !Array.isArray(value);

	function createFrame(src, update) {
		const iframe = document.createElement("iframe");
		iframe.src = src.href;
		iframe.title = update ? "Secure card update" : "Secure card payment";
		// The frame learns our origin from this referrer where the browser has
		// no location.ancestorOrigins; "origin" sends it without our path.
		iframe.referrerPolicy = "origin";
		iframe.style.cssText = `display:block;width:100%;border:0;height:${INITIAL_HEIGHT}px`;
		return iframe;
	}

	/** What our frame says: its content's height, or the checkout's outcome. */
	function onFrameMessage(iframe, data, onResult) {
		if (data.type === "height" && Number.isFinite(data.height)) {
			iframe.style.height = `${Math.min(Math.max(Math.ceil(data.height), 0), MAX_HEIGHT)}px`;
		} else if (data.type === "result" && typeof data.code === "string" && typeof onResult === "function") {
			const result = { code: data.code, customerId: data.customerId, message: data.message };
			if (typeof data.recovered === "boolean") result.recovered = data.recovered;
			if (isPlainObject(data.discount)) result.discount = data.discount;
			onResult(result);
		}
	}

	window.PaymentCheckout = Object.freeze({ mount });
})();
