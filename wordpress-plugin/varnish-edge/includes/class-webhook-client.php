<?php
/**
 * Sends signed webhooks to the purger.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * POSTs `{site, events}` to `<purger>/v1/events` with Standard Webhooks headers.
 */
class Webhook_Client {

	const TIMEOUT = 2;

	/** @var Settings */
	private $settings;

	/**
	 * Constructor.
	 *
	 * @param Settings $settings Settings.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Send one message.
	 *
	 * @param string $message_id Webhook id (idempotency key; reused on retries).
	 * @param string $site       Site host.
	 * @param array  $events     Events.
	 * @return array{ok:bool,code:int,error:string,accepted:int} Result; `error` says exactly what failed.
	 */
	public function send( $message_id, $site, array $events ) {
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
		$headers  = Webhook_Signer::headers( $message_id, time(), $body, $this->settings->secrets() );
		$response = wp_remote_post(
			$this->settings->events_endpoint(),
			array(
				'timeout'     => (int) apply_filters( 'varnish_edge_timeout', self::TIMEOUT ),
				'redirection' => 0,
				'headers'     => $headers,
				'body'        => $body,
				'user-agent'  => 'VarnishEdge/' . VERSION . '; ' . home_url(),
			)
		);
		if ( is_wp_error( $response ) ) {
			/* translators: 1: endpoint URL, 2: transport error. */
			return $this->result( false, 0, sprintf( __( 'Could not reach the purger at %1$s: %2$s', 'varnish-edge' ), $this->settings->events_endpoint(), $response->get_error_message() ) );
		}
		$code = (int) wp_remote_retrieve_response_code( $response );
		$json = json_decode( (string) wp_remote_retrieve_body( $response ), true );
		if ( $code >= 200 && $code < 300 ) {
			$count = is_array( $json ) ? count( (array) ( $json['accepted'] ?? array() ) ) + count( (array) ( $json['duplicates'] ?? array() ) ) : 0;
			return $this->result( true, $code, '', $count );
		}
		$detail = '';
		if ( is_array( $json ) ) {
			$detail = trim( implode( ' ', array_filter( array( (string) ( $json['error'] ?? '' ), (string) ( $json['field'] ?? '' ), (string) ( $json['message'] ?? '' ) ) ) ) );
		}
		if ( '' === $detail ) {
			$detail = substr( wp_strip_all_tags( (string) wp_remote_retrieve_body( $response ) ), 0, 200 );
		}
		/* translators: 1: HTTP status code, 2: HTTP reason phrase, 3: error detail from the purger. */
		return $this->result( false, $code, sprintf( __( 'The purger answered HTTP %1$d %2$s: %3$s', 'varnish-edge' ), $code, wp_remote_retrieve_response_message( $response ), $detail ) );
	}

	/**
	 * Result array.
	 *
	 * @param bool   $ok       Success.
	 * @param int    $code     HTTP status.
	 * @param string $error    Error.
	 * @param int    $accepted Acknowledged events.
	 * @return array{ok:bool,code:int,error:string,accepted:int}
	 */
	private function result( $ok, $code, $error, $accepted = 0 ) {
		return array(
			'ok'       => $ok,
			'code'     => $code,
			'error'    => $error,
			'accepted' => $accepted,
		);
	}
}
