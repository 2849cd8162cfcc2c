<?php
/**
 * Sends signed webhooks to the purger.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * POSTs `{site, events}` to `<purger>/v1/events`, and reads the site's receipts from
 * `<purger>/v1/receipts`, both signed with Standard Webhooks headers (the site's own secret is
 * its credential for both).
 */
class Webhook_Client {

	const TIMEOUT = 2;

	/**
	 * Error codes the purger answers with (`{"error": <code>, "message", "field"?}`, purger/README.md):
	 * the only part of an answer a message repeats, since the URL may point at any service.
	 */
	const PURGER_ERRORS = array(
		'signature',
		'unauthorized',
		'forbidden_site',
		'invalid',
		'invalid_json',
		'unsupported_media_type',
		'too_large',
		'event_too_large',
		'rate_limited',
		'storage_unavailable',
		'storage_full',
		'storage_unreplicated',
		'not_found',
	);

	/** @var Settings */
	private $settings;

	/**
	 * Constructor.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Send one message.
	 *
	 * @param string $message_id Webhook id (idempotency key; reused on retries).
	 * @param string $site       Site host.
	 * @return array{ok:bool,code:int,error:string} Result; `error` says exactly what failed.
	 */
	public function send( string $message_id, string $site, array $events ): array {
		if ( ! $this->settings->is_configured() ) {
			return $this->result( false, 0, __( 'The purger URL or a valid whsec_ secret is not configured.', 'varnish-edge' ) );
		}
		$body = wp_json_encode(
			array(
				'site'   => $site,
				'events' => array_values( $events ),
			),
			JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE
		);
		if ( false === $body ) {
			return $this->result( false, 0, __( 'The event batch could not be encoded as JSON.', 'varnish-edge' ) );
		}
		$response = $this->post( $this->settings->events_endpoint(), $message_id, $body );
		if ( is_wp_error( $response ) ) {
			/* translators: 1: endpoint URL, 2: transport error. */
			return $this->result( false, 0, sprintf( __( 'Could not reach the purger at %1$s: %2$s', 'varnish-edge' ), $this->settings->events_endpoint(), $response->get_error_message() ) );
		}
		$code = (int) wp_remote_retrieve_response_code( $response );
		if ( $code >= 200 && $code < 300 ) {
			return $this->result( true, $code, '' );
		}
		// The body is never repeated: the URL may point anywhere an administrator can type, and
		// its answer is shown in notices, the status panel and Site Health. Only a known error
		// code of the purger is named, and chooses the advice.
		$answer = self::purger_error( (string) wp_remote_retrieve_body( $response ) );
		return $this->result( false, $code, self::explain_status( $code, $this->settings->events_endpoint(), $site, $answer ) );
	}

	/**
	 * The receipts of some of the site's events (POST /v1/receipts): per node, whether every one
	 * of them is applied.
	 *
	 * @param string     $site    Site host.
	 * @param string[]   $ids     Event ids (1-100).
	 * @param float|null $timeout Seconds to wait for the answer (WordPress's cURL transport waits
	 *                            at least 1 s); null: the `varnish_edge_timeout` of a webhook.
	 * @return array{ok:bool,code:int,error:string,body:array<string,mixed>} `body`: the purger's answer when ok.
	 */
	public function receipts( string $site, array $ids, ?float $timeout = null ): array {
		$result = array( 'body' => array() );
		if ( ! $this->settings->is_configured() ) {
			return $result + $this->result( false, 0, __( 'The purger URL or a valid whsec_ secret is not configured.', 'varnish-edge' ) );
		}
		$body     = (string) wp_json_encode(
			array(
				'site' => $site,
				'ids'  => array_values( $ids ),
			),
			JSON_UNESCAPED_SLASHES
		);
		$endpoint = $this->settings->receipts_endpoint();
		$response = $this->post( $endpoint, 'rcpt_' . bin2hex( random_bytes( 12 ) ), $body, $timeout );
		if ( is_wp_error( $response ) ) {
			/* translators: 1: endpoint URL, 2: transport error. */
			return $result + $this->result( false, 0, sprintf( __( 'Could not reach the purger at %1$s: %2$s', 'varnish-edge' ), $endpoint, $response->get_error_message() ) );
		}
		$code   = (int) wp_remote_retrieve_response_code( $response );
		$answer = json_decode( (string) wp_remote_retrieve_body( $response ), true );
		if ( 200 === $code && is_array( $answer ) && isset( $answer['total'], $answer['nodes'] ) && is_array( $answer['nodes'] ) ) {
			return array( 'body' => $answer ) + $this->result( true, $code, '' );
		}
		if ( 200 === $code ) {
			/* translators: %s: endpoint URL. */
			return $result + $this->result( false, $code, sprintf( __( 'The purger at %s answered receipts in a form this plugin does not know.', 'varnish-edge' ), $endpoint ) );
		}
		if ( 404 === $code || 405 === $code ) {
			/* translators: 1: HTTP status code, 2: endpoint URL. */
			return $result + $this->result( false, $code, sprintf( __( 'The purger answered HTTP %1$d: it does not answer receipt queries at %2$s (an older purger?).', 'varnish-edge' ), $code, $endpoint ) );
		}
		if ( 403 === $code ) {
			/* translators: 1: HTTP status code, 2: site host. */
			return $result + $this->result( false, $code, sprintf( __( 'The purger answered HTTP %1$d: this secret may not read the receipts of %2$s.', 'varnish-edge' ), $code, $site ) );
		}
		return $result + $this->result( false, $code, self::explain_status( $code, $endpoint, $site, self::purger_error( (string) wp_remote_retrieve_body( $response ) ) ) );
	}

	/**
	 * POST a signed JSON body (no redirects, the configured timeout unless `$timeout` is given).
	 *
	 * @param string     $endpoint   URL.
	 * @param string     $message_id Webhook id.
	 * @param string     $body       Raw JSON body (signed as sent).
	 * @param float|null $timeout    Seconds; null: the filter `varnish_edge_timeout`.
	 * @return array<string,mixed>|\WP_Error The response.
	 */
	private function post( string $endpoint, string $message_id, string $body, ?float $timeout = null ): array|\WP_Error {
		return wp_remote_post(
			$endpoint,
			array(
				'timeout'     => $timeout ?? (int) apply_filters( 'varnish_edge_timeout', self::TIMEOUT ),
				'redirection' => 0,
				'headers'     => Webhook_Signer::headers( $message_id, time(), $body, $this->settings->secrets() ),
				'body'        => $body,
				'user-agent'  => 'VarnishEdge/' . VERSION . '; ' . home_url(),
			)
		);
	}

	/**
	 * The purger's error code in an answer body, when it is one the purger sends (PURGER_ERRORS),
	 * else ''. A 403 `forbidden_site` is told apart by what it refused: `forbidden_site:sites`
	 * (the site host is not in PURGER_SITES) or `forbidden_site:secret` (the secret is bound to
	 * another site in PURGER_WEBHOOK_SECRETS). The message itself is only matched, never repeated.
	 *
	 * @param string $body Answer body.
	 */
	public static function purger_error( string $body ): string {
		if ( '' === $body || strlen( $body ) > 8192 ) {
			return '';
		}
		$answer = json_decode( $body, true );
		$error  = is_array( $answer ) && is_string( $answer['error'] ?? null ) ? $answer['error'] : '';
		if ( ! in_array( $error, self::PURGER_ERRORS, true ) ) {
			return '';
		}
		$message = is_string( $answer['message'] ?? null ) ? $answer['message'] : '';
		if ( 'forbidden_site' === $error && false !== strpos( $message, 'PURGER_SITES' ) ) {
			return 'forbidden_site:sites';
		}
		if ( 'forbidden_site' === $error && false !== stripos( $message, 'secret' ) ) {
			return 'forbidden_site:secret';
		}
		return $error;
	}

	/**
	 * A generic, actionable message for a non-2xx answer: the status code, the purger's error code
	 * when it sent a known one, and what to check.
	 *
	 * @param int    $code     HTTP status.
	 * @param string $endpoint Events endpoint.
	 * @param string $site     Site host.
	 * @param string $answer   The purger's error code (`purger_error()`), or ''.
	 */
	public static function explain_status( int $code, string $endpoint, string $site, string $answer = '' ): string {
		$error = explode( ':', $answer )[0];
		/* translators: 1: HTTP status code, 2: the purger's error code (forbidden_site). */
		$http = '' !== $error ? sprintf( __( 'HTTP %1$d (%2$s)', 'varnish-edge' ), $code, $error ) : sprintf( 'HTTP %d', $code );
		switch ( true ) {
			case 400 === $code:
				/* translators: %s: HTTP status (HTTP 400). */
				return sprintf( __( 'The purger answered %s: it refused the events as invalid. Check that the plugin and the purger speak the same protocol version; the purger log names the field.', 'varnish-edge' ), $http );
			case 401 === $code:
				/* translators: %s: HTTP status (HTTP 401). */
				return sprintf( __( 'The purger answered %s: the signature was not accepted. Check that the secret matches one of the purger\'s secrets for this site and that the server clock is correct.', 'varnish-edge' ), $http );
			case 403 === $code && 'forbidden_site:sites' === $answer:
				/* translators: 1: HTTP status (HTTP 403), 2: site host. */
				return sprintf( __( 'The purger answered %1$s: site host not accepted. A purger accepts only the site hosts listed in its PURGER_SITES setting, and this site\'s host, %2$s, is not one of them. Set SITE_HOST=%2$s on the edge (the stacks copy it into PURGER_SITES), or add %2$s to PURGER_SITES, and restart the purger.', 'varnish-edge' ), $http, $site );
			case 403 === $code && 'forbidden_site:secret' === $answer:
				/* translators: 1: HTTP status (HTTP 403), 2: site host. */
				return sprintf( __( 'The purger answered %1$s: the secret is bound to another site in the purger\'s PURGER_WEBHOOK_SECRETS (site=whsec_…). Bind it to %2$s there, or use the secret of %2$s.', 'varnish-edge' ), $http, $site );
			case 403 === $code:
				/* translators: 1: HTTP status (HTTP 403), 2: site host. */
				return sprintf( __( 'The purger answered %1$s: it does not accept the site host %2$s. A purger accepts only the site hosts listed in its PURGER_SITES setting: set SITE_HOST=%2$s on the edge (or add it to PURGER_SITES), or use a secret bound to this site.', 'varnish-edge' ), $http, $site );
			case 404 === $code || 405 === $code:
				/* translators: 1: HTTP status (HTTP 404), 2: endpoint URL. */
				return sprintf( __( 'The purger answered %1$s: nothing accepts events at %2$s. Check the purger URL: the purger\'s base URL, without /v1/events or another path.', 'varnish-edge' ), $http, $endpoint );
			case 413 === $code:
				/* translators: %s: HTTP status (HTTP 413). */
				return sprintf( __( 'The purger answered %s: the batch is larger than it accepts.', 'varnish-edge' ), $http );
			case 429 === $code:
				/* translators: %s: HTTP status (HTTP 429). */
				return sprintf( __( 'The purger answered %s: too many requests from this site. The batch will be retried.', 'varnish-edge' ), $http );
			case $code >= 500:
				/* translators: %s: HTTP status (HTTP 503). */
				return sprintf( __( 'The purger answered %s: it is temporarily unavailable. The batch will be retried.', 'varnish-edge' ), $http );
			case $code >= 300 && $code < 400:
				/* translators: 1: HTTP status (HTTP 301), 2: endpoint URL. */
				return sprintf( __( 'The purger answered %1$s: %2$s redirects, and redirects are not followed. Use the final URL as the purger URL.', 'varnish-edge' ), $http, $endpoint );
			default:
				/* translators: 1: HTTP status (HTTP 418), 2: endpoint URL. */
				return sprintf( __( 'The purger answered %1$s, which the Varnish Edge purger does not send. Check that %2$s is the purger\'s events endpoint.', 'varnish-edge' ), $http, $endpoint );
		}
	}

	/**
	 * Result array.
	 *
	 * @param int $code HTTP status.
	 * @return array{ok:bool,code:int,error:string}
	 */
	private function result( bool $ok, int $code, string $error ): array {
		return array(
			'ok'    => $ok,
			'code'  => $code,
			'error' => $error,
		);
	}
}
