<?php
/**
 * Settings: one option, overridable by wp-config constants.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Reads, validates and normalizes the plugin settings.
 */
class Settings {

	const OPTION      = 'varnish_edge_settings';
	const DEFAULT_TTL = 604800;
	const MIN_TTL     = 60;
	const MAX_TTL     = 31536000;

	/**
	 * Setting name => wp-config constant that overrides it.
	 */
	const CONSTANTS = array(
		'purger_url' => 'VARNISH_EDGE_PURGER_URL',
		'secret'     => 'VARNISH_EDGE_SECRET',
		'namespace'  => 'VARNISH_EDGE_NAMESPACE',
		'ttl'        => 'VARNISH_EDGE_TTL',
	);

	/**
	 * Raw stored values merged with defaults.
	 *
	 * @return array<string,mixed>
	 */
	public function stored(): array {
		$stored = get_option( self::OPTION, array() );
		return array_merge(
			array(
				'purger_url' => '',
				'secret'     => '',
				'namespace'  => '',
				'ttl'        => self::DEFAULT_TTL,
			),
			is_array( $stored ) ? $stored : array()
		);
	}

	/**
	 * Whether a setting comes from a wp-config constant.
	 *
	 * @param string $name Setting name.
	 */
	public function is_constant( string $name ): bool {
		return isset( self::CONSTANTS[ $name ] ) && defined( self::CONSTANTS[ $name ] );
	}

	/**
	 * Effective value of a setting (constant first, then option).
	 *
	 * @param string $name Setting name.
	 */
	public function get( string $name ): mixed {
		if ( $this->is_constant( $name ) ) {
			return constant( self::CONSTANTS[ $name ] );
		}
		$stored = $this->stored();
		return $stored[ $name ] ?? null;
	}

	/**
	 * A setting's label, as the settings page shows it (its errors name the field with it).
	 *
	 * @param string $name Setting name.
	 */
	public static function label( string $name ): string {
		$labels = array(
			'purger_url' => __( 'Purger URL', 'varnish-edge' ),
			'secret'     => __( 'Webhook secret(s)', 'varnish-edge' ),
			'namespace'  => __( 'Key namespace', 'varnish-edge' ),
			'ttl'        => __( 'Long TTL (seconds)', 'varnish-edge' ),
		);
		return $labels[ $name ] ?? $name;
	}

	/**
	 * What is wrong with a wp-config constant's value ('' when it is fine or not defined): a
	 * constant bypasses the form's checks, so a bad value is ignored, and the page says so.
	 *
	 * @param string $name Setting name.
	 */
	public function constant_problem( string $name ): string {
		if ( ! $this->is_constant( $name ) ) {
			return '';
		}
		$constant = self::CONSTANTS[ $name ];
		$value    = trim( (string) constant( $constant ) );
		switch ( $name ) {
			case 'purger_url':
				return self::valid_url( untrailingslashit( $value ) ) ? ''
					/* translators: %s: constant name. */
					: sprintf( __( 'The %s constant is not an http:// or https:// URL with a host (and no query string or fragment): nothing is sent to the purger until it is fixed.', 'varnish-edge' ), $constant );
			case 'secret':
				$parts = array_filter( array_map( 'trim', explode( ',', $value ) ) );
				$valid = self::parse_secrets( $value );
				if ( ! $valid ) {
					/* translators: %s: constant name. */
					return sprintf( __( 'The %s constant holds no valid whsec_ secret: nothing is sent to the purger until it is fixed.', 'varnish-edge' ), $constant );
				}
				return count( $valid ) === count( $parts ) ? ''
					/* translators: 1: constant name, 2: number of ignored values. */
					: sprintf( _n( 'The %1$s constant holds %2$d value that is not a whsec_ secret: it is ignored.', 'The %1$s constant holds %2$d values that are not whsec_ secrets: they are ignored.', count( $parts ) - count( $valid ), 'varnish-edge' ), $constant, count( $parts ) - count( $valid ) );
			case 'namespace':
				return '' === $value || Key_Scheme::is_valid_namespace( $value ) ? ''
					/* translators: %s: constant name. */
					: sprintf( __( 'The %s constant is not a valid key namespace: it is ignored.', 'varnish-edge' ), $constant );
			case 'ttl':
				return ctype_digit( $value ) && (int) $value >= self::MIN_TTL && (int) $value <= self::MAX_TTL ? ''
					/* translators: 1: constant name, 2: default seconds. */
					: sprintf( __( 'The %1$s constant is not a whole number of seconds in the allowed range: the default, %2$d, is used.', 'varnish-edge' ), $constant, self::DEFAULT_TTL );
		}
		return '';
	}

	/**
	 * Purger base URL without trailing slash ('' when unset).
	 */
	public function purger_url(): string {
		$url = untrailingslashit( trim( (string) $this->get( 'purger_url' ) ) );
		// A value that bypassed the form (a constant, a direct option write) is used only when valid.
		return '' !== $url && self::valid_url( $url ) ? $url : '';
	}

	/**
	 * Whether the current user may change the purger URL: on multisite only network administrators
	 * (the URL decides where this server sends requests); on a single site whoever may save the
	 * settings page (options.php already requires manage_options).
	 */
	public static function can_edit_purger_url(): bool {
		return ! is_multisite() || current_user_can( 'manage_network_options' );
	}

	/**
	 * The events endpoint.
	 */
	public function events_endpoint(): string {
		return $this->purger_url() . '/v1/events';
	}

	/**
	 * The receipts endpoint (where the site reads how far its events got).
	 */
	public function receipts_endpoint(): string {
		return $this->purger_url() . '/v1/receipts';
	}

	/**
	 * Configured secrets, first one signs.
	 *
	 * @return string[]
	 */
	public function secrets(): array {
		return self::parse_secrets( (string) $this->get( 'secret' ) );
	}

	/**
	 * Long TTL in seconds.
	 */
	public function ttl(): int {
		$ttl = (int) $this->get( 'ttl' );
		return $ttl >= self::MIN_TTL && $ttl <= self::MAX_TTL ? $ttl : self::DEFAULT_TTL;
	}

	/**
	 * Whether the purge pipeline is configured (URL and a valid secret).
	 */
	public function is_configured(): bool {
		return '' !== $this->purger_url() && array() !== $this->secrets();
	}

	/**
	 * Key namespace: configured, or derived from the site host; multisite adds the blog id.
	 */
	public function key_namespace(): string {
		$ns = trim( (string) $this->get( 'namespace' ) );
		if ( ! Key_Scheme::is_valid_namespace( $ns ) ) {
			$ns = preg_replace( '/[^A-Za-z0-9.-]+/', '-', self::site_host( home_url() ) );
			$ns = trim( (string) $ns, '-.' );
			if ( ! Key_Scheme::is_valid_namespace( $ns ) ) {
				$ns = 'wp' . substr( md5( home_url() ), 0, 8 );
			}
		}
		if ( is_multisite() ) {
			$ns .= '-b' . get_current_blog_id();
		}
		return $ns;
	}

	/**
	 * The `site` value for webhooks: home host, lower-case, no trailing dot, no :80/:443.
	 *
	 * @param string $url Any URL (normally home_url()).
	 */
	public static function site_host( string $url ): string {
		$parts = wp_parse_url( $url );
		$host  = rtrim( strtolower( $parts['host'] ?? '' ), '.' );
		if ( isset( $parts['port'] ) && ! in_array( (int) $parts['port'], array( 80, 443 ), true ) ) {
			$host .= ':' . (int) $parts['port'];
		}
		return $host;
	}

	/**
	 * Split a comma-separated secret list, keeping only whsec_ secrets with valid base64.
	 *
	 * @return string[]
	 */
	public static function parse_secrets( string $value ): array {
		$out = array();
		foreach ( explode( ',', $value ) as $secret ) {
			$secret = trim( $secret );
			if ( '' !== $secret && null !== Webhook_Signer::secret_key( $secret ) ) {
				$out[] = $secret;
			}
		}
		return $out;
	}

	/**
	 * Purger URL rule: absolute http(s) URL with a host, no query or fragment.
	 */
	public static function valid_url( string $url ): bool {
		$parts = wp_parse_url( $url );
		return is_array( $parts )
			&& in_array( strtolower( $parts['scheme'] ?? '' ), array( 'http', 'https' ), true )
			&& ! empty( $parts['host'] )
			&& ! isset( $parts['query'] )
			&& ! isset( $parts['fragment'] )
			&& ! preg_match( '/[\s"<>]/', $url );
	}

	/**
	 * Settings API sanitize callback. Invalid fields keep their previous value and add an error.
	 *
	 * @param mixed $input Submitted values.
	 * @return array<string,mixed>
	 */
	public function sanitize( mixed $input ): array {
		$old   = $this->stored();
		$input = is_array( $input ) ? wp_unslash( $input ) : array();
		$out   = $old;

		if ( isset( $input['purger_url'] ) ) {
			$url      = untrailingslashit( trim( (string) $input['purger_url'] ) );
			$endpoint = preg_match( '#^(.*?)/v1/(?:events|receipts)/?$#i', $url, $m ) ? $m[1] : null;
			if ( null !== $endpoint && self::valid_url( $endpoint ) ) {
				// The endpoint itself pasted in: the plugin adds /v1/events (and /v1/receipts).
				$url = $endpoint;
			}
			if ( $url === $old['purger_url'] ) {
				$out['purger_url'] = $old['purger_url'];
			} elseif ( ! self::can_edit_purger_url() ) {
				$this->error( 'purger_url', __( 'Only network administrators can change the purger URL on a multisite network. The previous value was kept.', 'varnish-edge' ) );
			} elseif ( '' !== $url && ! in_array( strtolower( (string) wp_parse_url( $url, PHP_URL_SCHEME ) ), array( 'http', 'https' ), true ) ) {
				$this->error( 'purger_url', __( 'The purger URL must start with http:// or https:// (other schemes are refused), such as http://purger:8090. The previous value was kept.', 'varnish-edge' ) );
			} elseif ( '' === $url || self::valid_url( $url ) ) {
				$out['purger_url'] = esc_url_raw( $url, array( 'http', 'https' ) );
				if ( null !== $endpoint && $url === $endpoint ) {
					/* translators: %s: the saved base URL. */
					$this->error( 'purger_url', sprintf( __( 'Saved as %s, the purger\'s base URL: the plugin adds /v1/events itself.', 'varnish-edge' ), $out['purger_url'] ), 'info' );
				}
			} else {
				$this->error( 'purger_url', __( 'The purger URL must be an absolute URL with a host and no query string or fragment, such as http://purger:8090. The previous value was kept.', 'varnish-edge' ) );
			}
		}

		if ( isset( $input['secret'] ) ) {
			$raw = trim( (string) $input['secret'] );
			if ( '' === $raw ) {
				// An empty field keeps the stored secret (it is never echoed back into the form).
				$out['secret'] = $old['secret'];
			} else {
				$parts = array_filter( array_map( 'trim', explode( ',', $raw ) ) );
				$valid = self::parse_secrets( $raw );
				if ( count( $valid ) === count( $parts ) ) {
					$out['secret'] = implode( ',', $valid );
				} else {
					$this->error( 'secret', __( 'Every secret must look like whsec_ followed by base64 (at least 16 bytes). The previous secret was kept.', 'varnish-edge' ) );
				}
			}
		}

		if ( isset( $input['namespace'] ) ) {
			$ns = trim( (string) $input['namespace'] );
			if ( '' === $ns || Key_Scheme::is_valid_namespace( $ns ) ) {
				$out['namespace'] = $ns;
			} else {
				$this->error( 'namespace', __( 'The key namespace may use letters, digits, ".", "_", ":" and "-" (up to 48 characters, starting with a letter or digit). The previous value was kept.', 'varnish-edge' ) );
			}
		}

		if ( isset( $input['ttl'] ) ) {
			$ttl = trim( (string) $input['ttl'] );
			if ( ctype_digit( $ttl ) && (int) $ttl >= self::MIN_TTL && (int) $ttl <= self::MAX_TTL ) {
				$out['ttl'] = (int) $ttl;
			} else {
				/* translators: 1: minimum seconds, 2: maximum seconds. */
				$this->error( 'ttl', sprintf( __( 'The long TTL must be a whole number of seconds between %1$d and %2$d. The previous value was kept.', 'varnish-edge' ), self::MIN_TTL, self::MAX_TTL ) );
			}
		}

		return $out;
	}

	/**
	 * Record a settings notice (visible on the settings page), naming its field. WordPress prints
	 * these as HTML: the message is plain text, escaped here.
	 *
	 * @param string $field   Setting name.
	 * @param string $message What is wrong (or, for `info`, what was done).
	 * @param string $type    `error` or `info`.
	 */
	private function error( string $field, string $message, string $type = 'error' ): void {
		if ( function_exists( 'add_settings_error' ) ) {
			/* translators: 1: field label (Purger URL), 2: the message. */
			add_settings_error( self::OPTION, 'varnish-edge-' . $field, esc_html( sprintf( __( '%1$s: %2$s', 'varnish-edge' ), self::label( $field ), $message ) ), $type );
		}
	}
}
