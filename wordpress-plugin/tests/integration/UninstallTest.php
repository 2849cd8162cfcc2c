<?php
use VarnishEdge\Outbox_Delivery;
use VarnishEdge\Outbox_Table;

/**
 * uninstall.php removes the table, options and the retry schedule (then the test restores them).
 */
class UninstallTest extends VE_TestCase {

	public function test_uninstall_removes_everything() {
		global $wpdb;
		$settings = get_option( 'varnish_edge_settings' );
		wp_schedule_single_event( time() + 600, Outbox_Delivery::CRON_HOOK );
		update_option( Outbox_Delivery::STATUS_OPTION, array( 'last_success' => time() ) );
		$script = Environment::$dir . '/uninstall-probe.php';
		file_put_contents(
			$script,
			'<?php $_SERVER["HTTP_HOST"] = "127.0.0.1"; require ' . var_export( Environment::$wp . '/wp-load.php', true ) . '; define( "WP_UNINSTALL_PLUGIN", "varnish-edge/varnish-edge.php" ); require ' . var_export( Environment::plugin_dir() . '/uninstall.php', true ) . '; echo "done";'
		);
		try {
			$this->assertSame( 'done', shell_exec( escapeshellarg( PHP_BINARY ) . ' ' . escapeshellarg( $script ) ) );
			wp_cache_flush();
			$this->assertNull( $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', Outbox_Table::name() ) ) );
			$this->assertSame( '0', $wpdb->get_var( "SELECT COUNT(*) FROM {$wpdb->options} WHERE option_name LIKE 'varnish\\_edge\\_%'" ) );
			$this->assertFalse( wp_next_scheduled( Outbox_Delivery::CRON_HOOK ) );
		} finally {
			Outbox_Table::install();
			update_option( 'varnish_edge_settings', $settings );
		}
		$this->assertSame( Outbox_Table::name(), $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', Outbox_Table::name() ) ) );
	}
}
