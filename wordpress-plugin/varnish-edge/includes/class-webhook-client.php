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
		// its answer is shown in notices, the status panel and Site Health.
		return $this->result( false, $code, self::explain_status( $code, $this->settings->events_endpoint(), $site ) );
	}

	/**
	 * The receipts of some of the site's events (POST /v1/receipts): per node, whether every one
	 * of them is applied.
	 *
	 * @param string   $site Site host.
	 * @param string[] $ids  Event ids (1-100).
	 * @return array{ok:bool,code:int,error:string,body:array<string,mixed>} `body`: the purger's answer when ok.
	 */
	public function receipts( string $site, array $ids ): array {
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
		$response = $this->post( $endpoint, 'rcpt_' . bin2hex( random_bytes( 12 ) ), $body );
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
		return $result + $this->result( false, $code, self::explain_status( $code, $endpoint, $site ) );
	}

	/**
	 * POST a signed JSON body (no redirects, the configured timeout).
	 *
	 * @param string $endpoint   URL.
	 * @param string $message_id Webhook id.
	 * @param string $body       Raw JSON body (signed as sent).
	 * @return array<string,mixed>|\WP_Error The response.
	 */
	private function post( string $endpoint, string $message_id, string $body ): array|\WP_Error {
		return wp_remote_post(
			$endpoint,
			array(
				'timeout'     => (int) apply_filters( 'varnish_edge_timeout', self::TIMEOUT ),
				'redirection' => 0,
				'headers'     => Webhook_Signer::headers( $message_id, time(), $body, $this->settings->secrets() ),
				'body'        => $body,
				'user-agent'  => 'VarnishEdge/' . VERSION . '; ' . home_url(),
			)
		);
	}

	/**
	 * A generic, actionable message for a non-2xx answer: the status code and what to check.
	 *
	 * @param int    $code     HTTP status.
	 * @param string $endpoint Events endpoint.
	 * @param string $site     Site host.
	 */
	public static function explain_status( int $code, string $endpoint, string $site ): string {
		switch ( true ) {
			case 400 === $code:
				/* translators: %d: HTTP status code. */
				return sprintf( __( 'The purger answered HTTP %d: it refused the events as invalid. Check that the plugin and the purger speak the same protocol version; the purger log names the field.', 'varnish-edge' ), $code );
			case 401 === $code:
				/* translators: %d: HTTP status code. */
				return sprintf( __( 'The purger answered HTTP %d: the signature was not accepted. Check that the secret matches one of the purger\'s secrets for this site and that the server clock is correct.', 'varnish-edge' ), $code );
			case 403 === $code:
				/* translators: 1: HTTP status code, 2: site host. */
				return sprintf( __( 'The purger answered HTTP %1$d: it does not accept the site %2$s. Add it to the purger\'s allowed sites (PURGER_SITES) or use a secret scoped to it.', 'varnish-edge' ), $code, $site );
			case 404 === $code || 405 === $code:
				/* translators: 1: HTTP status code, 2: endpoint URL. */
				return sprintf( __( 'The purger answered HTTP %1$d: nothing accepts events at %2$s. Check the purger URL (its base URL, without /v1/events).', 'varnish-edge' ), $code, $endpoint );
			case 413 === $code:
				/* translators: %d: HTTP status code. */
				return sprintf( __( 'The purger answered HTTP %d: the batch is larger than it accepts.', 'varnish-edge' ), $code );
			case 429 === $code:
				/* translators: %d: HTTP status code. */
				return sprintf( __( 'The purger answered HTTP %d: too many requests from this site. The batch will be retried.', 'varnish-edge' ), $code );
			case $code >= 500:
				/* translators: %d: HTTP status code. */
				return sprintf( __( 'The purger answered HTTP %d: it is temporarily unavailable. The batch will be retried.', 'varnish-edge' ), $code );
			case $code >= 300 && $code < 400:
				/* translators: 1: HTTP status code, 2: endpoint URL. */
				return sprintf( __( 'The purger answered HTTP %1$d: %2$s redirects, and redirects are not followed. Use the final URL as the purger URL.', 'varnish-edge' ), $code, $endpoint );
			default:
				/* translators: 1: HTTP status code, 2: endpoint URL. */
				return sprintf( __( 'The purger answered HTTP %1$d, which the Varnish Edge purger does not send. Check that %2$s is the purger\'s events endpoint.', 'varnish-edge' ), $code, $endpoint );
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
