// The issuer's challenge is over: the card frame around this page is told so,
// on its own origin only. Nothing else is read or sent from here.
if (window.parent !== window) window.parent.postMessage({ type: "challenge-ended" }, location.origin);
