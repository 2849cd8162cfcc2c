<?php
// Router for `php -S`: static files as-is, PHP files directly, everything else through index.php.
$root = $_SERVER['DOCUMENT_ROOT'];
$path = rawurldecode( parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
$file = realpath( $root . $path );
if ( $file && is_dir( $file ) && is_file( $file . '/index.php' ) ) {
	$file .= '/index.php';
}
if ( $file && is_file( $file ) ) {
	if ( substr( $file, -4 ) !== '.php' ) {
		return false;
	}
	$_SERVER['SCRIPT_NAME']     = substr( $file, strlen( realpath( $root ) ) );
	$_SERVER['SCRIPT_FILENAME'] = $file;
	$_SERVER['PHP_SELF']        = $_SERVER['SCRIPT_NAME'];
	chdir( dirname( $file ) );
	require $file;
	return true;
}
$_SERVER['SCRIPT_NAME']     = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = $root . '/index.php';
$_SERVER['PHP_SELF']        = '/index.php';
chdir( $root );
require $root . '/index.php';
