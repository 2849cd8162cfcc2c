<?php
/**
 * Settings page, status panel and admin actions.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Settings → Varnish Edge: settings form, "Test connection", outbox status and flush, and the
 * admin-post handlers behind the admin bar links.
 */
class Admin_Page {

	const SLUG = 'varnish-edge';

	/**
	 * Longest wait, in seconds, for an admin bar purge to be live on every edge node.
	 */
	const LIVE_WAIT = 5;

	/** @var Settings */
	private $settings;
	/** @var Outbox_Store */
	private $outbox;
	/** @var Outbox_Delivery */
	private $delivery;
	/** @var Event_Queue */
	private $queue;
	/** @var Manual_Purge */
	private $manual;
	/** @var Live_Status_Log */
	private $live_log;
	/** @var Live_Status */
	private $live;

	/**
	 * Constructor.
	 *
	 * @param Outbox_Store    $outbox   Pending batches and dead letters (status panel).
	 * @param Outbox_Delivery $delivery Delivery status and "Deliver outbox now".
	 * @param Event_Queue     $queue    Queue of the admin bar's purges.
	 * @param Manual_Purge    $manual   What a purge asked for invalidates.
	 * @param Live_Status_Log $live_log Where a purge's events are written down for the user.
	 * @param Live_Status     $live     How far they got.
	 */
	public function __construct( Settings $settings, Outbox_Store $outbox, Outbox_Delivery $delivery, Event_Queue $queue, Manual_Purge $manual, Live_Status_Log $live_log, Live_Status $live ) {
		$this->settings = $settings;
		$this->outbox   = $outbox;
		$this->delivery = $delivery;
		$this->queue    = $queue;
		$this->manual   = $manual;
		$this->live_log = $live_log;
		$this->live     = $live;
	}

	/**
	 * Hooks: the settings page, its notices and its admin-post handlers.
	 */
	public function register(): void {
		add_action( 'admin_menu', array( $this, 'add_menu' ) );
		add_action( 'admin_init', array( $this, 'register_settings' ) );
		add_action( 'admin_notices', array( $this, 'notices' ) );
		add_action( 'admin_post_varnish_edge_test', array( $this, 'handle_test' ) );
		add_action( 'admin_post_varnish_edge_flush_outbox', array( $this, 'handle_flush_outbox' ) );
		add_action( 'admin_post_varnish_edge_purge', array( $this, 'handle_purge' ) );
		add_filter( 'plugin_action_links_' . plugin_basename( PLUGIN_FILE ), array( $this, 'action_links' ) );
	}

	/**
	 * Action `admin_menu`.
	 */
	public function add_menu(): void {
		add_options_page(
			__( 'Varnish Edge', 'varnish-edge' ),
			__( 'Varnish Edge', 'varnish-edge' ),
			'manage_options',
			self::SLUG,
			array( $this, 'render' )
		);
	}

	/**
	 * Filter `plugin_action_links_*`.
	 *
	 * @param string[] $links Links.
	 * @return string[]
	 */
	public function action_links( array $links ): array {
		array_unshift( $links, sprintf( '<a href="%s">%s</a>', esc_url( $this->page_url() ), esc_html__( 'Settings', 'varnish-edge' ) ) );
		return $links;
	}

	/**
	 * Settings page URL.
	 */
	private function page_url(): string {
		return admin_url( 'options-general.php?page=' . self::SLUG );
	}

	/**
	 * Action `admin_init`: the option and its fields.
	 */
	public function register_settings(): void {
		register_setting(
			'varnish_edge',
			Settings::OPTION,
			array(
				'type'              => 'array',
				'sanitize_callback' => array( $this->settings, 'sanitize' ),
				'show_in_rest'      => false,
				'default'           => array(),
			)
		);
		add_settings_section( 'varnish_edge_main', __( 'Purger connection', 'varnish-edge' ), '__return_false', self::SLUG );
		foreach ( array_keys( Settings::CONSTANTS ) as $name ) {
			add_settings_field(
				'varnish_edge_' . $name,
				Settings::label( $name ),
				array( $this, 'render_field' ),
				self::SLUG,
				'varnish_edge_main',
				array(
					'name'      => $name,
					'label_for' => 'varnish-edge-' . $name,
				)
			);
		}
	}

	/**
	 * One settings field; constants are shown read-only (and said to override the field), secrets
	 * never echoed: the secret field says whether one is set and takes a new one to replace it.
	 *
	 * @param array{name:string,label_for?:string} $args Field arguments.
	 */
	public function render_field( array $args ): void {
		$name     = $args['name'];
		$stored   = $this->settings->stored();
		$id       = 'varnish-edge-' . $name;
		$field    = Settings::OPTION . '[' . $name . ']';
		$constant = $this->settings->is_constant( $name );

		if ( 'secret' === $name ) {
			$count = count( $this->settings->secrets() );
			if ( $constant ) {
				printf( '<input type="text" id="%s" class="regular-text" value="%s" readonly />', esc_attr( $id ), esc_attr__( '(set in wp-config.php)', 'varnish-edge' ) );
			} else {
				printf(
					'<input type="password" id="%1$s" name="%2$s" class="regular-text" value="" autocomplete="new-password" placeholder="%3$s" aria-describedby="%1$s-state" />',
					esc_attr( $id ),
					esc_attr( $field ),
					esc_attr( $count ? __( 'Set (not shown): type a new secret to replace it', 'varnish-edge' ) : 'whsec_…' )
				);
			}
			printf( '<p class="description" id="%s-state">', esc_attr( $id ) );
			if ( $constant ) {
				/* translators: %d: number of valid secrets in the constant. */
				echo esc_html( sprintf( _n( '%d secret is set in wp-config.php (not shown).', '%d secrets are set in wp-config.php (not shown).', $count, 'varnish-edge' ), $count ) );
			} elseif ( $count ) {
				/* translators: %d: number of configured secrets. */
				echo '<strong>' . esc_html( sprintf( _n( 'Set: %d secret (not shown).', 'Set: %d secrets (not shown).', $count, 'varnish-edge' ), $count ) ) . '</strong> ';
				echo esc_html( _n( 'Type a new secret to replace it, or leave the field empty to keep it.', 'Type new secrets to replace them, or leave the field empty to keep them.', $count, 'varnish-edge' ) );
			} else {
				echo '<strong>' . esc_html__( 'Not set.', 'varnish-edge' ) . '</strong> ' . esc_html__( 'Paste the whsec_… secret the purger holds for this site.', 'varnish-edge' );
			}
			echo ' ' . esc_html__( 'Several secrets may be comma-separated during rotation; the first one signs.', 'varnish-edge' ) . '</p>';
		} else {
			$value  = $constant ? (string) $this->settings->get( $name ) : (string) $stored[ $name ];
			$locked = $constant || ( 'purger_url' === $name && ! Settings::can_edit_purger_url() );
			printf(
				'<input type="%1$s" id="%2$s" name="%3$s" class="regular-text" value="%4$s" %5$s />',
				'ttl' === $name ? 'number' : 'text',
				esc_attr( $id ),
				esc_attr( $field ),
				esc_attr( $value ),
				$locked ? 'readonly disabled' : ''
			);
			if ( 'namespace' === $name ) {
				/* translators: %s: effective namespace. */
				echo '<p class="description">' . esc_html( sprintf( __( 'Prefix of every surrogate key. Effective: %s', 'varnish-edge' ), $this->settings->key_namespace() ) ) . '</p>';
			}
			if ( 'purger_url' === $name ) {
				echo '<p class="description">' . esc_html__( 'The purger\'s base URL, http:// or https:// (such as http://purger:8090); events are POSTed to <base>/v1/events.', 'varnish-edge' ) . '</p>';
				if ( ! $constant && ! Settings::can_edit_purger_url() ) {
					echo '<p class="description">' . esc_html__( 'On a multisite network only network administrators can change the purger URL.', 'varnish-edge' ) . '</p>';
				}
			}
		}
		if ( $constant ) {
			printf(
				'<p class="description varnish-edge-constant">%s</p>',
				/* translators: %s: constant name. */
				esc_html( sprintf( __( 'Defined by the %s constant in wp-config.php, which overrides this field.', 'varnish-edge' ), Settings::CONSTANTS[ $name ] ) )
			);
			$saved = get_option( Settings::OPTION, array() );
			$saved = is_array( $saved ) && isset( $saved[ $name ] ) ? trim( (string) $saved[ $name ] ) : '';
			if ( '' !== $saved && ( 'secret' === $name || $saved !== trim( (string) $this->settings->get( $name ) ) ) ) {
				echo '<p class="description">' . esc_html__( 'The value saved on this page is not used while the constant is defined.', 'varnish-edge' ) . '</p>';
			}
			$problem = $this->settings->constant_problem( $name );
			if ( '' !== $problem ) {
				echo '<p class="description varnish-edge-constant-problem"><strong>' . esc_html( $problem ) . '</strong></p>';
			}
		}
	}

	/**
	 * The settings page.
	 */
	public function render(): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'Sorry, you are not allowed to manage Varnish Edge.', 'varnish-edge' ), 403 );
		}
		$stats  = $this->outbox->stats();
		$status = Outbox_Delivery::status();
		echo '<div class="wrap"><h1>' . esc_html__( 'Varnish Edge', 'varnish-edge' ) . '</h1>';
		// After a save WordPress's options-head.php already printed them (settings-updated).
		settings_errors( Settings::OPTION, false, true );
		echo '<form method="post" action="' . esc_url( admin_url( 'options.php' ) ) . '" id="varnish-edge-settings">';
		settings_fields( 'varnish_edge' );
		do_settings_sections( self::SLUG );
		submit_button( __( 'Save settings', 'varnish-edge' ) );
		echo '</form>';

		echo '<h2>' . esc_html__( 'Connection', 'varnish-edge' ) . '</h2>';
		echo '<form method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '">';
		echo '<input type="hidden" name="action" value="varnish_edge_test" />';
		wp_nonce_field( 'varnish_edge_test' );
		submit_button( __( 'Test connection', 'varnish-edge' ), 'secondary', 'varnish-edge-test', false );
		echo '</form>';

		echo '<h2>' . esc_html__( 'Status', 'varnish-edge' ) . '</h2><table class="widefat striped" id="varnish-edge-status" style="max-width:50em"><tbody>';
		$rows = array(
			__( 'Purge pipeline', 'varnish-edge' )           => $this->settings->is_configured() ? __( 'configured', 'varnish-edge' ) : __( 'not configured (1 s microcache only)', 'varnish-edge' ),
			__( 'Site', 'varnish-edge' )                     => Settings::site_host( home_url() ),
			__( 'Outbox', 'varnish-edge' )                   => sprintf(
				/* translators: 1: batches, 2: events. */
				__( '%1$d pending batches, %2$d events', 'varnish-edge' ),
				$stats['rows'],
				$stats['events']
			),
			__( 'Last successful delivery', 'varnish-edge' ) => $status['last_success'] ? wp_date( 'Y-m-d H:i:s', $status['last_success'] ) : __( 'never', 'varnish-edge' ),
			__( 'Refused by the purger', 'varnish-edge' )    => $stats['dead'] > 0 ? sprintf(
				/* translators: 1: number of batches, 2: date, 3: the purger's answer. */
				_n( '%1$d batch, not retried (latest %2$s — %3$s)', '%1$d batches, not retried (latest %2$s — %3$s)', $stats['dead'], 'varnish-edge' ),
				$stats['dead'],
				wp_date( 'Y-m-d H:i:s', $stats['dead_at'] ),
				$stats['dead_reason']
			) : __( 'none', 'varnish-edge' ),
			__( 'Last error', 'varnish-edge' )               => '' !== $status['last_error'] ? wp_date( 'Y-m-d H:i:s', $status['last_error_at'] ) . ' — ' . $status['last_error'] : __( 'none', 'varnish-edge' ),
		);
		foreach ( $rows as $label => $value ) {
			echo '<tr><th scope="row">' . esc_html( $label ) . '</th><td>' . esc_html( $value ) . '</td></tr>';
		}
		echo '</tbody></table>';
		echo '<form method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '">';
		echo '<input type="hidden" name="action" value="varnish_edge_flush_outbox" />';
		wp_nonce_field( 'varnish_edge_flush_outbox' );
		submit_button( __( 'Deliver outbox now', 'varnish-edge' ), 'secondary', 'varnish-edge-flush', false );
		echo '</form></div>';
	}

	/**
	 * Store a notice for the current user and redirect.
	 *
	 * @param string $type success|error|info.
	 * @param string $to   Redirect URL.
	 */
	private function finish( string $type, string $message, string $to ): never {
		set_transient( 'varnish_edge_notice_' . get_current_user_id(), array( $type, $message ), 120 );
		wp_safe_redirect( $to );
		exit;
	}

	/**
	 * Action `admin_notices`.
	 */
	public function notices(): void {
		$key    = 'varnish_edge_notice_' . get_current_user_id();
		$notice = get_transient( $key );
		if ( ! is_array( $notice ) || ! current_user_can( Admin_Bar::capability() ) ) {
			return;
		}
		delete_transient( $key );
		printf( '<div class="notice notice-%1$s is-dismissible varnish-edge-notice"><p>%2$s</p></div>', esc_attr( $notice[0] ), esc_html( $notice[1] ) );
	}

	/**
	 * Check capability and nonce, or stop.
	 *
	 * @param string $action Nonce action.
	 */
	private function guard( string $capability, string $action ): void {
		if ( ! current_user_can( $capability ) ) {
			wp_die( esc_html__( 'Sorry, you are not allowed to do that.', 'varnish-edge' ), 403 );
		}
		check_admin_referer( $action );
	}

	/**
	 * admin-post `varnish_edge_test`: send a signed test event and report exactly what failed.
	 */
	public function handle_test(): never {
		$this->guard( 'manage_options', 'varnish_edge_test' );
		$result = $this->test_connection();
		$this->finish( $result['ok'] ? 'success' : 'error', $result['message'], $this->page_url() );
	}

	/**
	 * Where a setting is set, as a message names it: "the Purger URL field", or "the
	 * VARNISH_EDGE_PURGER_URL constant in wp-config.php" when a constant overrides the field.
	 *
	 * @param string $name Setting name.
	 */
	private function where( string $name ): string {
		return $this->settings->is_constant( $name )
			/* translators: %s: constant name. */
			? sprintf( __( 'the %s constant in wp-config.php', 'varnish-edge' ), Settings::CONSTANTS[ $name ] )
			/* translators: %s: field label. */
			: sprintf( __( 'the %s field', 'varnish-edge' ), Settings::label( $name ) );
	}

	/**
	 * Send one harmless signed event (a key nothing carries) and say what the purger answered,
	 * and which setting to fix when it did not accept it.
	 *
	 * @return array{ok:bool,message:string}
	 */
	public function test_connection(): array {
		if ( '' === $this->settings->purger_url() ) {
			$raw = trim( (string) $this->settings->get( 'purger_url' ) );
			return array(
				'ok'      => false,
				'message' => '' === $raw
					/* translators: %s: where the purger URL is set (the Purger URL field). */
					? sprintf( __( 'Test failed: %s is empty. Enter the purger\'s base URL, such as http://purger:8090, and save.', 'varnish-edge' ), $this->where( 'purger_url' ) )
					/* translators: %s: where the purger URL is set (the Purger URL field). */
					: sprintf( __( 'Test failed: %s is not a valid http:// or https:// URL.', 'varnish-edge' ), $this->where( 'purger_url' ) ),
			);
		}
		if ( array() === $this->settings->secrets() ) {
			return array(
				'ok'      => false,
				/* translators: %s: where the secret is set (the Webhook secret(s) field). */
				'message' => sprintf( __( 'Test failed: %s holds no valid whsec_ secret. Paste the secret the purger holds for this site, and save.', 'varnish-edge' ), $this->where( 'secret' ) ),
			);
		}
		$scheme = new Key_Scheme( $this->settings->key_namespace() );
		$event  = Event_Builder::build(
			( new Invalidation() )->tags( array( $scheme->listing( 'connection-test' ) ), true )->reason( 'connection test' ),
			Settings::site_host( home_url() ),
			$scheme,
			time()
		);
		$client = new Webhook_Client( $this->settings );
		$result = $client->send( 'msg_test_' . bin2hex( random_bytes( 8 ) ), Settings::site_host( home_url() ), $event );
		if ( $result['ok'] ) {
			return array(
				'ok'      => true,
				/* translators: 1: endpoint, 2: HTTP status. */
				'message' => sprintf( __( 'Connection OK: %1$s accepted a signed test event (HTTP %2$d).', 'varnish-edge' ), $this->settings->events_endpoint(), $result['code'] ),
			);
		}
		$code = (int) $result['code'];
		$fix  = '';
		if ( 0 === $code ) {
			/* translators: %s: where the purger URL is set (the Purger URL field). */
			$fix = sprintf( __( 'Check %s (scheme, host and port), and that the purger is running and reachable from this server.', 'varnish-edge' ), $this->where( 'purger_url' ) );
		} elseif ( ( $code >= 300 && $code < 400 ) || 404 === $code || 405 === $code ) {
			/* translators: %s: where the purger URL is set (the Purger URL field). */
			$fix = sprintf( __( 'Fix %s.', 'varnish-edge' ), $this->where( 'purger_url' ) );
		} elseif ( 401 === $code ) {
			/* translators: %s: where the secret is set (the Webhook secret(s) field). */
			$fix = sprintf( __( 'Check %s.', 'varnish-edge' ), $this->where( 'secret' ) );
		}
		return array(
			'ok'      => false,
			/* translators: 1: what the purger answered, or what failed, 2: which setting to fix (may be empty). */
			'message' => trim( sprintf( __( 'Test failed: %1$s %2$s', 'varnish-edge' ), $result['error'], $fix ) ),
		);
	}

	/**
	 * admin-post `varnish_edge_flush_outbox`.
	 */
	public function handle_flush_outbox(): never {
		$this->guard( 'manage_options', 'varnish_edge_flush_outbox' );
		$report = $this->delivery->flush( 50 );
		$stats  = $this->outbox->stats();
		if ( $report['failed'] ) {
			/* translators: 1: error, 2: pending batches. */
			$this->finish( 'error', sprintf( __( 'Delivery failed: %1$s (%2$d batches still pending).', 'varnish-edge' ), $report['error'], $stats['rows'] ), $this->page_url() );
		}
		if ( $stats['dead'] ) {
			/* translators: 1: events delivered, 2: batches refused, 3: the purger's answer. */
			$this->finish( 'error', sprintf( __( 'Delivered %1$d events; the purger refused %2$d batches again: %3$s', 'varnish-edge' ), $report['events'], $stats['dead'], $stats['dead_reason'] ), $this->page_url() );
		}
		/* translators: 1: events delivered, 2: pending batches. */
		$this->finish( 'success', sprintf( __( 'Delivered %1$d events; %2$d batches pending.', 'varnish-edge' ), $report['events'], $stats['rows'] ), $this->page_url() );
	}

	/**
	 * admin-post `varnish_edge_purge` (admin bar): scope `all` or `url`. Sent at once; the notice
	 * after the redirect says where it is live (waiting up to LIVE_WAIT seconds for the edge).
	 */
	public function handle_purge(): never {
		$scope = isset( $_GET['scope'] ) && 'url' === $_GET['scope'] ? 'url' : 'all'; // Nonce checked in guard(), next line.
		$this->guard( Admin_Bar::capability(), 'varnish_edge_purge_' . $scope );
		$user = wp_get_current_user()->user_login;
		if ( 'url' === $scope ) {
			$url = isset( $_GET['url'] ) ? esc_url_raw( wp_unslash( $_GET['url'] ) ) : '';
			$inv = $this->manual->url( $url, $user );
		} else {
			$inv = $this->manual->all( $user );
		}
		$back = wp_get_referer() ? wp_get_referer() : admin_url();
		if ( is_wp_error( $inv ) ) {
			$this->finish( 'error', $inv->get_error_message(), $back );
		}
		if ( ! $this->settings->is_configured() ) {
			$this->finish( 'error', __( 'Nothing was purged: the purger is not configured.', 'varnish-edge' ), $back );
		}
		$this->queue->add( $inv );
		$at     = Live_Status_Log::now_ms();
		$events = $this->queue->commit();
		$report = $this->delivery->process();
		$what   = 'url' === $scope ? __( 'Purge of this page', 'varnish-edge' ) : __( 'Purge of the whole site', 'varnish-edge' );
		if ( $report['failed'] || $report['refused'] ) {
			/* translators: 1: the purge, 2: why delivery failed. */
			$this->finish( 'warning', sprintf( __( '%1$s queued; delivery failed: %2$s', 'varnish-edge' ), $what, $report['error'] ), $back );
		}
		$status = $this->live->wait( $this->live_log->record( get_current_user_id(), 0, $at, $events ), self::LIVE_WAIT );
		/* translators: 1: the purge, 2: where it is live (Live on 3 of 3 edge nodes in 184 ms). */
		$this->finish( 'live' === $status['state'] ? 'success' : 'warning', sprintf( __( '%1$s sent. %2$s', 'varnish-edge' ), $what, $status['message'] ), $back );
	}
}
