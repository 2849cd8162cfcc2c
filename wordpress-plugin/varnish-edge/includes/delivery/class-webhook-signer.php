<?php
/**
 * Standard Webhooks signatures.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Signs `<id>.<timestamp>.<body>` with HMAC-SHA256 (Standard Webhooks, v1).
 */
class Webhook_Signer {

	/**
	 * Raw HMAC key of a `whsec_<base64>` secret, or null when malformed.
	 *
	 * @param string $secret Secret.
	 */
	public static function secret_key( mixed $secret ): ?string {
		if ( ! is_string( $secret ) || 0 !== strpos( $secret, 'whsec_' ) ) {
			return null;
		}
		$key = base64_decode( substr( $secret, 6 ), true );
		return ( false === $key || strlen( $key ) < 16 ) ? null : $key;
	}

	/**
	 * Signature header value (`v1,<base64>`) for one secret.
	 *
	 * @param string $id        Message id.
	 * @param string $timestamp Unix seconds.
	 * @param string $body      Raw body.
	 * @param string $secret    whsec_ secret.
	 * @throws \InvalidArgumentException When the secret is not `whsec_<base64>` of at least 16 bytes.
	 */
	public static function sign( string $id, string $timestamp, string $body, mixed $secret ): string {
		$key = self::secret_key( $secret );
		if ( null === $key ) {
			throw new \InvalidArgumentException( 'Malformed webhook secret (expected whsec_<base64>).' );
		}
		return 'v1,' . base64_encode( hash_hmac( 'sha256', $id . '.' . $timestamp . '.' . $body, $key, true ) );
	}

	/**
	 * Headers for a signed request, signed with the first secret.
	 *
	 * @param string   $id        Message id.
	 * @param int      $timestamp Unix seconds.
	 * @param string   $body      Raw body.
	 * @param string[] $secrets   Secrets.
	 * @return array<string,string>
	 */
	public static function headers( string $id, int $timestamp, string $body, array $secrets ): array {
		return array(
			'Content-Type'      => 'application/json',
			'webhook-id'        => $id,
			'webhook-timestamp' => (string) $timestamp,
			'webhook-signature' => self::sign( $id, (string) $timestamp, $body, reset( $secrets ) ),
		);
	}
}
