<?php
/**
 * Site Health test.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Reports configuration, outbox backlog, last delivery and last error in Site Health.
 */
class Site_Health {

	/** @var Settings */
	private $settings;

	/** @var Outbox_Store */
	private $outbox;

	/**
	 * Constructor.
	 *
	 * @param Outbox_Store $outbox Pending batches and dead letters.
	 */
	public function __construct( Settings $settings, Outbox_Store $outbox ) {
		$this->settings = $settings;
		$this->outbox   = $outbox;
	}

	/**
	 * Hooks: the test in Site Health.
	 */
	public function register(): void {
		add_filter( 'site_status_tests', array( $this, 'add_test' ) );
	}

	/**
	 * Filter `site_status_tests`.
	 *
	 * @param array<string,array<string,mixed>> $tests Site Health tests by kind.
	 * @return array<string,array<string,mixed>>
	 */
	public function add_test( array $tests ): array {
		$tests['direct']['varnish_edge'] = array(
			'label' => __( 'Varnish Edge purge delivery', 'varnish-edge' ),
			'test'  => array( $this, 'run' ),
		);
		return $tests;
	}

	/**
	 * The test.
	 */
	public function run(): array {
		$stats  = $this->outbox->stats();
		$status = Outbox_Delivery::status();
		$result = array(
			'label'       => __( 'Cache purges reach the purger', 'varnish-edge' ),
			'status'      => 'good',
			'badge'       => array(
				'label' => __( 'Performance', 'varnish-edge' ),
				'color' => 'blue',
			),
			'description' => '',
			'actions'     => sprintf( '<a href="%s">%s</a>', esc_url( admin_url( 'options-general.php?page=varnish-edge' ) ), esc_html__( 'Varnish Edge settings', 'varnish-edge' ) ),
			'test'        => 'varnish_edge',
		);
		$lines   = array();
		$lines[] = sprintf(
			/* translators: 1: pending batches, 2: pending events. */
			__( 'Outbox: %1$d pending batches (%2$d events).', 'varnish-edge' ),
			$stats['rows'],
			$stats['events']
		);
		$lines[] = $status['last_success']
			/* translators: %s: time ago. */
			? sprintf( __( 'Last successful delivery: %s ago.', 'varnish-edge' ), human_time_diff( $status['last_success'] ) )
			: __( 'No successful delivery yet.', 'varnish-edge' );
		if ( '' !== $status['last_error'] ) {
			/* translators: 1: time ago, 2: error message. */
			$lines[] = sprintf( __( 'Last error (%1$s ago): %2$s', 'varnish-edge' ), human_time_diff( $status['last_error_at'] ), $status['last_error'] );
		}
		if ( $stats['dead'] > 0 ) {
			$lines[] = sprintf(
				/* translators: 1: number of batches, 2: time ago, 3: the purger's answer. */
				_n( '%1$d batch was refused by the purger and will not be retried (a full purge was queued in its place); the latest %2$s ago: %3$s', '%1$d batches were refused by the purger and will not be retried (a full purge was queued in their place); the latest %2$s ago: %3$s', $stats['dead'], 'varnish-edge' ),
				$stats['dead'],
				human_time_diff( $stats['dead_at'] ),
				$stats['dead_reason']
			);
			$lines[] = __( 'Fix the cause, then use "Deliver outbox now" on the settings page (or wp varnish-edge outbox flush) to send them again.', 'varnish-edge' );
		}
		if ( ! $this->settings->is_configured() ) {
			$result['status'] = 'recommended';
			$result['label']  = __( 'Varnish Edge is not connected to a purger', 'varnish-edge' );
			array_unshift( $lines, __( 'Without a purger URL and secret, pages stay on the 1 second microcache.', 'varnish-edge' ) );
		} elseif ( $stats['dead'] > 0 ) {
			$result['status'] = 'critical';
			$result['label']  = __( 'The purger refused some cache purges', 'varnish-edge' );
		} elseif ( $stats['rows'] > 0 && $stats['oldest'] < time() - 300 ) {
			$result['status'] = 'critical';
			$result['label']  = __( 'Cache purges are not being delivered', 'varnish-edge' );
		} elseif ( $stats['rows'] > 0 ) {
			$result['status'] = 'recommended';
			$result['label']  = __( 'Cache purges are waiting to be delivered', 'varnish-edge' );
		}
		$result['description'] = '<p>' . implode( '</p><p>', array_map( 'esc_html', $lines ) ) . '</p>';
		return $result;
	}
}
